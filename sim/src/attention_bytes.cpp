#include "mlasim/sim/attention_bytes.h"

#include <algorithm>

#include "mlasim/model/dtype.h"

namespace mlasim::sim {

int attention_row_heads(const Plan& plan, const DecodeBatch& batch) {
  return plan.derived.num_heads_eff > 0 ? plan.derived.num_heads_eff : batch.q_heads;
}

double work_output_bytes(const WorkInfo& w, int heads) {
  const double rows = double(w.qo_rows()) * heads;
  return w.is_partial() ? rows * (4.0 * DecodeBatch::kVHeadDim + 4) : rows * 2.0 * DecodeBatch::kVHeadDim;
}

double work_kv_bytes(const WorkInfo& w, const DecodeBatch& batch) {
  const double kv_per_token = double(DecodeBatch::kQkHeadDim) * dtype_bytes(batch.kv_dtype);
  return double(w.kv_pages()) * std::max(batch.page_size, 1) * kv_per_token;
}

AttentionBytes attention_bytes(const Plan& plan, const DecodeBatch& batch) {
  const int heads = attention_row_heads(plan, batch);
  AttentionBytes b;
  for (const WorkInfo& w : plan.works) {
    b.stage1_read_mb += work_kv_bytes(w, batch) / 1e6;
    b.stage1_written_mb += work_output_bytes(w, heads) / 1e6;
    if (w.is_partial()) b.reduce_read_mb += work_output_bytes(w, heads) / 1e6;
  }
  if (plan.num_partials() == 0) return AttentionBytes{b.stage1_read_mb, b.stage1_written_mb, 0, 0};
  double reduce_rows = 0;
  const int tiles = std::max<int>(static_cast<int>(plan.reduce_indptr.size()) - 1, 0);
  for (int t = 0; t < tiles; ++t) reduce_rows += plan.reduce_tile_rows(t);
  b.reduce_written_mb = reduce_rows * heads * 2.0 * DecodeBatch::kVHeadDim / 1e6;
  return b;
}

}  // namespace mlasim::sim
