#include "mlasim/sim/l2_writeback.h"

#include <algorithm>
#include <optional>

#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

L2Writeback l2_writeback_of(const CostParams& params, const Gpu& gpu) {
  const L2Writeback wb{params.l2_carry_us_per_mb, params.l2_carry_cap_mb, gpu.l2_mib * double(1 << 20) / 1e6};
  return wb.known() ? wb : L2Writeback{};
}

double l2_dirty_before_mb(std::span<const OpBytes> ops, const L2Writeback& wb) {
  double dirty = 0;
  for_each_chunk_back(ops, wb.window_mb, [&](double, double w, double touched) {
    if (w > 0 && touched + w <= wb.window_mb) dirty += w;
  });
  return std::min(dirty, wb.cap_mb);
}

double writeback_exposure_at(const KernelClassParams& cls, int active_clusters, int num_cu) {
  const double floor = cls.writeback_share_floor;
  if (floor <= 0 || num_cu <= 0) return cls.writeback_exposure;
  const double share = double(active_clusters) / num_cu;
  return cls.writeback_exposure * std::clamp((share - floor) / (1.0 - floor), 0.0, 1.0);
}

double l2_writeback_us(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                       double dirty_mb, const L2Writeback& wb) {
  if (!wb.known() || dirty_mb <= 0 || params.b_hbm_tbps <= 0) return 0;
  return l2_writeback_us(plan, batch, gpu, params, simulate_metrics(plan, batch, gpu, params), dirty_mb, wb);
}

double l2_writeback_us(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                       const Metrics& clean, double dirty_mb, const L2Writeback& wb) {
  if (!wb.known() || dirty_mb <= 0 || params.b_hbm_tbps <= 0) return 0;
  // The window is one L2 of what the stage 1 reads from memory: a work of several passes that reads its KV again
  // from memory (reread_fraction) sweeps the L2 that many times sooner.
  const double read_mb = clean.stage1_read_bytes / 1e6;
  const std::optional<KernelClassId> cls = parse_kernel_class(clean.kernel_class);
  const double exposure = cls ? writeback_exposure_at(params.resolved(*cls), clean.active_clusters, gpu.num_cu) : 0.0;
  if (read_mb <= 0 || clean.stage1_us <= 0 || exposure <= 0) return 0;
  // The dirty MB in MB of reads: the memory writes slower than it reads (1 TB/s = 1 MB/us).
  const double as_reads = dirty_mb * wb.us_per_mb * params.b_hbm_tbps;
  CostParams shared = params;
  shared.b_hbm_tbps = params.b_hbm_tbps / (1.0 + as_reads / wb.window_mb);
  const Metrics slowed = simulate_metrics(plan, batch, gpu, shared);
  const double curve_us = std::max(0.0, slowed.stage1_us - clean.stage1_us) * std::min(1.0, wb.window_mb / read_mb);
  return curve_us * exposure;
}

}  // namespace mlasim::sim
