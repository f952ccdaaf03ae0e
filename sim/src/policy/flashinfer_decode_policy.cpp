// flashinfer-decode: FlashInfer's decode plan for its MLA decode kernel (split-policies spec 4.3 I1), any GPU.
// One CTA per (KV chunk, group of 16 q heads), hardware-scheduled, launched chunk fastest (request-major), then
// head group. The grid is sized for `occupancy` CTAs per SM: when the batch alone does not fill it, the chunk
// (in pages, at least 128 tokens) is the smallest whose chunk count fits; otherwise every request is one chunk.
// Chunks are contiguous; split requests' chunks write partials that the merge-states kernel combines.
// Not in the plan: under CUDA graphs FlashInfer keeps split KV on (one-chunk requests then also pass through the
// merge) and pads the grid with CTAs that exit at once; the chunks themselves are the same.
// Units in the plan's model: sum_blocks is the number of chunks, payload_blocks the chunk in pages.
#include <algorithm>
#include <memory>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "plan_assembly.h"

namespace mlasim::sim {
namespace {

constexpr int kHeadsPerCta = 16;
constexpr int kMinChunkTokens = 128;

class FlashInferDecodePolicy final : public SplitPolicy {
 public:
  explicit FlashInferDecodePolicy(const KnobValues& k)
      : SplitPolicy(k.spec()), occupancy_(k.integer<int>("occupancy")) {}
  KernelKind kernel() const override { return KernelKind::grid; }

 private:
  Plan build_plan(const PlanRequest& r) const override {
    const int sms = detail::usable_clusters(r);
    const DecodeBatch& batch = r.batch;
    if (batch.max_qo_len() != 1)
      throw InputError("qo_len",
                       "flashinfer-decode plans one query token per request (use flashinfer-mla for "
                       "longer queries), got " +
                           std::to_string(batch.max_qo_len()));
    const int heads = batch.q_heads;
    if (heads > kHeadsPerCta && heads % kHeadsPerCta != 0)
      throw InputError("heads",
                       "flashinfer-decode runs 16 heads per CTA; heads must be 8, 16 or a multiple of 16, got " +
                           std::to_string(heads));
    const int gdy = static_cast<int>(cdiv(heads, kHeadsPerCta));
    const int B = batch.size();
    const int64_t max_grid = int64_t{occupancy_} * sms;

    int64_t max_pages = 1;
    for (int b = 0; b < B; ++b) max_pages = std::max<int64_t>(max_pages, batch.pages(b));
    auto chunks_for = [&](int64_t chunk) {
      int64_t n = 0;
      for (int b = 0; b < B; ++b) n += cdiv(batch.pages(b), chunk);
      return n;
    };
    int64_t chunk = max_pages;
    if (int64_t{B} * gdy < max_grid) {
      int64_t lo = std::max(kMinChunkTokens / batch.page_size, 1), hi = max_pages;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (chunks_for(mid) * gdy > max_grid)
          lo = mid + 1;
        else
          hi = mid;
      }
      chunk = lo;
    }

    detail::PlanAssembler a(batch, {gdy, std::min(heads, kHeadsPerCta), 0}, name());
    int max_chunks = 0;
    for (int g = 0; g < gdy; ++g)
      for (int b = 0; b < B; ++b) {
        const int64_t pages = batch.pages(b);
        max_chunks = std::max(max_chunks, static_cast<int>(cdiv(pages, chunk)));
        for (int64_t start = 0; start < pages; start += chunk)
          a.add_workgroup(a.tile_of(b * gdy + g, 0), start, std::min(pages, start + chunk));
      }
    Plan plan = a.finish(KernelKind::grid, 0);
    plan.derived.num_splits = max_chunks;
    plan.model.sum_blocks = chunks_for(chunk);
    plan.model.payload_blocks = chunk;
    plan.model.packed_qo_len_per_wg = std::min(heads, kHeadsPerCta);
    return plan;
  }

  int occupancy_;
};

}  // namespace

std::unique_ptr<SplitPolicy> make_flashinfer_decode(const KnobValues& k) {
  return std::make_unique<FlashInferDecodePolicy>(k);
}

}  // namespace mlasim::sim
