#pragma once
// What the ops before an attention wrote into L2, and read after writing, costs its stage 1 (docs/step.md §4, the
// grid probe), and by a law of its own a device-to-device copy after them (§3). A latency-bound attention (few CTAs
// streaming) slows when the lines its first reads evict are dirty, and more when reads came after the writes and
// pushed them towards eviction; lines with enough traffic after them were written back before it began. On an H100
// a fill of 16 MB then a read of 32 MB cost our unsplit 16 x 4096 attention 1.46 us, the read then the fill 0.10 us.
//
// Each op is cut into kL2PriorWritesChunks chunks in time order, each reading and writing its share of the op's
// bytes. A chunk's written MB cost us_per_mb * exp(A / rho_mb) us per MB, where A is the MB read after it plus gamma
// times the MB written after it; a chunk whose own written MB and the MB touched (read or written) after it come to
// more than cap_mb costs nothing; the sum saturates at max_us.
//
//   const L2PriorWrites law = l2_prior_writes_of(params);   // unknown (all zero) where the profile lacks it
//   double us = l2_prior_writes_us(ops, law);               // ops oldest first, the last one just before stage 1
#include <span>

#include "mlasim/model/cost_model.h"

namespace mlasim {

constexpr int kL2PriorWritesChunks = 40;

// What one op moves, in MB (1e6 bytes).
struct OpBytes {
  double read_mb = 0;
  double written_mb = 0;
  double touched_mb() const { return read_mb + written_mb; }
};

struct L2PriorWrites {
  double us_per_mb = 0;
  double rho_mb = 0;
  double gamma = 0;
  double max_us = 0;
  double cap_mb = 0;
  bool known() const { return us_per_mb > 0 && rho_mb > 0 && max_us > 0 && cap_mb > 0; }
};

// Walks `ops` (oldest first) back from the newest, each cut into kL2PriorWritesChunks chunks of its reads and
// writes, op by op until more than `stop_mb` has been touched: visit(read_mb, written_mb, touched_after_mb) for each
// chunk, newest first, touched_after_mb counting the MB read or written after it. The walk both L2 terms of a
// stage 1 take (this law, and the write-back's dirty MB, sim/l2_writeback.h).
template <class Visit>
void for_each_chunk_back(std::span<const OpBytes> ops, double stop_mb, Visit&& visit) {
  double touched = 0;
  for (auto op = ops.rbegin(); op != ops.rend() && touched <= stop_mb; ++op) {
    const double r = op->read_mb / kL2PriorWritesChunks, w = op->written_mb / kL2PriorWritesChunks;
    for (int c = 0; c < kL2PriorWritesChunks; ++c) {
      visit(r, w, touched);
      touched += r + w;
    }
  }
}

// The cost parameters l2_prior_writes_*; all zero (unknown) unless every one but gamma is set.
L2PriorWrites l2_prior_writes_of(const CostParams& params);

// The law of a stage 1 of class `cls` whose plan runs on `active_clusters`: the class's own law where the profile
// has one (KernelClassParams::prior_writes_*) and the plan is unsplit (`split` false; the class's law was measured
// on unsplit plans), its cost per MB that per cluster times the clusters, with no saturation; else the global law.
// `own` (optional) says which of the two it is.
L2PriorWrites l2_prior_writes_of(const CostParams& params, KernelClassId cls, int active_clusters, bool split,
                                 bool* own = nullptr);

// The law of a device-to-device copy that reads `copy_mb` after the ops (CostParams::l2_copy_prior_writes_*): in
// the copy-batch probe the copy after the step stack's separate q prep took up to 2 us more than after the fused
// one, and about in proportion to its size (8, 16 and 32 MiB), so its cost per MB written is the profile's per MB
// copied times copy_mb, with no saturation. All zero (unknown) where the profile lacks it or copy_mb is 0.
L2PriorWrites l2_copy_prior_writes_of(const CostParams& params, double copy_mb);

// The stage 1's extra time (us) after `ops`, oldest first. Ops more than cap_mb of traffic before it cost nothing,
// so a caller may stop collecting ops once they hold more than cap_mb touched. 0 when `law` is unknown.
double l2_prior_writes_us(std::span<const OpBytes> ops, const L2PriorWrites& law);

}  // namespace mlasim
