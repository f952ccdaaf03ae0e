// flashinfer-mla: FlashInfer's persistent MLA plan (MLAPlan, split-policies spec 4.3 I3), transplanted to any GPU.
// CTAs work on 64 packed q rows (heads x tokens); when the batch's average packed length exceeds 64 two CTAs
// form a cluster over a 128-row q tile. A KV length limit comes from the total (causally trimmed) KV per
// cluster; tiles longer than the limit are cut into contiguous chunks of `limit` tokens, and each chunk goes to
// the currently cheapest cluster (a min-heap on 2 x tile rows + chunk tokens, float, ties broken by the
// standard heap order as FlashInfer's own heap does). Requests go in order, q tiles last to first.
// In the plan cluster c's CTAs are clusters c x size + rank; a split tile's chunks write partials and the
// kernel's in-kernel merge combines them (its split of the merge over CTAs is not part of the plan).
// Units in the plan's model: sum_blocks is the total KV tokens, payload_blocks the KV limit in tokens.
#include <algorithm>
#include <memory>
#include <utility>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "plan_assembly.h"

namespace mlasim::sim {
namespace {

constexpr int kCtaRows = 64;

// I3 step 2: the KV limit per chunk from the average KV per cluster.
int64_t kv_len_limit(int64_t per_cluster) {
  if (per_cluster <= 8) return 32;
  if (per_cluster <= 16) return 64;
  if (per_cluster <= 32) return 128;
  if (per_cluster <= 64) return 192;
  return cdiv(per_cluster, 256) * 256;
}

// KV a causal q tile reads: up to the diagonal of its last row (right-aligned); the last tile reads everything.
int64_t causal_kv_end(int64_t qlen, int64_t kv, int tile, int tiles, int tile_rows, int heads) {
  if (tile + 1 == tiles) return kv;
  return std::clamp<int64_t>(kv - qlen + cdiv(int64_t{tile + 1} * tile_rows, heads), 0, kv);
}

class FlashInferMlaPolicy final : public SplitPolicy {
 public:
  explicit FlashInferMlaPolicy(const KnobValues& k) : SplitPolicy(k.spec()) {}
  KernelKind kernel() const override { return KernelKind::persistent; }

 private:
  Plan build_plan(const PlanRequest& r) const override {
    const int sms = detail::usable_clusters(r);
    const DecodeBatch& batch = r.batch;
    if (batch.page_size != 1)
      throw InputError("page_size", "flashinfer-mla cuts KV at token granularity; page size must be 1, got " +
                                        std::to_string(batch.page_size));
    const int B = batch.size();
    const int heads = batch.q_heads;
    int64_t packed_sum = 0;
    for (int q : batch.qo_lens) packed_sum += int64_t{q} * heads;
    const int cluster_size = packed_sum / B > kCtaRows ? 2 : 1;
    const int num_clusters = sms / cluster_size;
    if (num_clusters == 0) throw InputError("clusters", "flashinfer-mla needs 2 SMs for a cluster of 2 CTAs, got 1");
    const int tile_rows = kCtaRows * cluster_size;
    const detail::TileShape shape = detail::packed_row_blocks(batch, kCtaRows, name());

    auto tiles_of = [&](int b) { return static_cast<int>(cdiv(int64_t{batch.qo_lens[b]} * heads, tile_rows)); };
    auto kv_of = [&](int b, int t) {
      const int64_t kv = batch.kv_lens[b];
      return batch.causal ? causal_kv_end(batch.qo_lens[b], kv, t, tiles_of(b), tile_rows, heads) : kv;
    };
    int64_t total = 0;
    for (int b = 0; b < B; ++b)
      for (int t = tiles_of(b) - 1; t >= 0; --t) total += kv_of(b, t);
    const int64_t limit = kv_len_limit(std::max<int64_t>(cdiv(total, num_clusters), 1));

    // The cost heap: (cluster, cost), all clusters at zero cost to start; minimum on top.
    std::vector<std::pair<int, float>> heap(static_cast<size_t>(num_clusters));
    for (int c = 0; c < num_clusters; ++c) heap[c] = {c, 0.f};
    const auto cheaper = [](const std::pair<int, float>& x, const std::pair<int, float>& y) {
      return x.second > y.second;
    };

    detail::PlanAssembler a(batch, shape, name());
    for (int b = 0; b < B; ++b) {
      const int blocks = static_cast<int>(cdiv(int64_t{batch.qo_lens[b]} * heads, kCtaRows));
      for (int t = tiles_of(b) - 1; t >= 0; --t) {
        const int64_t kv = kv_of(b, t);
        for (int64_t start = 0; start < kv; start += limit) {
          const int64_t len = std::min(kv - start, limit);
          std::pop_heap(heap.begin(), heap.end(), cheaper);
          const auto [c, cost] = heap.back();
          heap.back() = {c, cost + (2 * static_cast<float>(tile_rows) + static_cast<float>(len))};
          std::push_heap(heap.begin(), heap.end(), cheaper);
          for (int rank = 0; rank < cluster_size; ++rank) {
            const int block = t * cluster_size + rank;
            if (block < blocks) a.add(c * cluster_size + rank, a.tile_of_block(b, block), start, start + len);
          }
        }
      }
    }
    Plan plan = a.finish(KernelKind::persistent, num_clusters * cluster_size);
    plan.derived.num_splits = num_clusters;
    plan.model.sum_blocks = total;
    plan.model.payload_blocks = limit;
    plan.model.packed_qo_len_per_wg = tile_rows;
    plan.model.qo_splits = batch.max_qo_len() > shape.tokens_per_tile;
    return plan;
  }
};

}  // namespace

std::unique_ptr<SplitPolicy> make_flashinfer_mla(const KnobValues& k) {
  return std::make_unique<FlashInferMlaPolicy>(k);
}

}  // namespace mlasim::sim
