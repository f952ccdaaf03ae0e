// fixed: N equal contiguous splits per request, Triton-style split-KV decode.
// Split s of a request of L pages covers [s x len, min((s + 1) x len, L)) with len = cdiv(L, N) rounded up to
// `granule` pages, so a request shorter than N granules gets fewer, non-empty splits (the empty ones exit at
// once and are left out). A grid of one workgroup per (request, head group, split), launched request fastest,
// then head group, then split; the splits write fp32 partials and a second kernel merges each request's partials,
// as Triton's two-stage decode does (Triton also runs it over one-split requests; the plan marks those final).
#include <algorithm>
#include <memory>
#include <optional>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "plan_assembly.h"

namespace mlasim::sim {
namespace {

class FixedPolicy final : public SplitPolicy {
 public:
  explicit FixedPolicy(const KnobValues& k)
      : SplitPolicy(k.spec()),
        splits_(k.integer<int>("splits")),
        granule_(k.integer<int>("granule")),
        heads_per_wg_(k.integer_or_derived<int>("heads_per_wg")) {}
  KernelKind kernel() const override { return KernelKind::grid; }
  // Sparse batches: each query token's selected rows, split the same fixed way.
  GatheredRows sparse_rows() const override { return GatheredRows::selected; }

 private:
  Plan build_plan(const PlanRequest& r) const override {
    detail::usable_clusters(r);
    const DecodeBatch& batch = r.batch;
    const int heads = batch.q_heads;
    const int per_wg = heads_per_wg_.value_or(heads);
    if (per_wg > heads || heads % per_wg != 0)
      throw InputError("heads_per_wg",
                       "must divide the " + std::to_string(heads) + " q heads, got " + std::to_string(per_wg));
    const int R = heads / per_wg;
    const int B = batch.size();

    std::vector<int64_t> split_len(static_cast<size_t>(B));
    int64_t sum_granules = 0, largest = 0;
    for (int b = 0; b < B; ++b) {
      const int64_t L = batch.pages(b);
      split_len[b] = cdiv(cdiv(L, splits_), granule_) * granule_;
      sum_granules += cdiv(L, granule_);
      largest = std::max(largest, split_len[b] / granule_);
    }

    detail::PlanAssembler a(batch, {R, per_wg, 0}, name());
    for (int s = 0; s < splits_; ++s)
      for (int g = 0; g < R; ++g)
        for (int b = 0; b < B; ++b) {
          const int64_t L = batch.pages(b), begin = s * split_len[b];
          if (begin < L) a.add_workgroup(a.tile_of(b * R + g, 0), begin, std::min(L, begin + split_len[b]));
        }
    Plan plan = a.finish(KernelKind::grid, 0);
    plan.derived.num_splits = splits_;
    plan.model.sum_blocks = sum_granules;
    plan.model.payload_blocks = largest;
    plan.model.packed_qo_len_per_wg = per_wg * batch.max_qo_len();
    return plan;
  }

  int splits_;
  int granule_;
  std::optional<int> heads_per_wg_;  // nullopt: all heads in one workgroup
};

}  // namespace

std::unique_ptr<SplitPolicy> make_fixed(const KnobValues& k) { return std::make_unique<FixedPolicy>(k); }

}  // namespace mlasim::sim
