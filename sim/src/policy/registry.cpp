// The table of every built-in split policy and its knobs. Adding a policy: one file in src/policy/, one entry here.
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {

std::unique_ptr<SplitPolicy> make_aiter_v1(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_aiter_v1_adaptive(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_aiter_nonpersistent(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_flashmla(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_flashinfer_mla(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_flashinfer_decode(const KnobValues& knobs);
std::unique_ptr<SplitPolicy> make_fixed(const KnobValues& knobs);

namespace {

using D = KnobDomain;

KnobInfo msb_knob() {
  return {"max_split_per_batch",
          {D::integer(-1), D::word("vllm"), D::integers(1, 4096)},
          "vllm",
          "global split budget: NS = min(clusters, msb x batch); -1 = all clusters; "
          "vllm = -1 below 128 heads, else max(1, min(cdiv(CUs, batch), 32)); sparse (top-k) batches: -1, as the "
          "sparse backends pass none"};
}

KnobInfo experimental_knob() {
  return {"experimental",
          {D::integer(0), D::integer(1)},
          "0",
          "AITER_ENABLE_EXPERIMENTAL: HipKittens kernels (occupancy 2 for fp8 with heads x qlen = 64)"};
}

}  // namespace

const std::vector<PolicyInfo>& policy_registry() {
  static const std::vector<PolicyInfo> registry = {
      {"aiter-v1",
       "AITER get_mla_metadata_v1 fast mode (v1.2): sequential greedy fill of equal per-cluster payloads",
       KernelKind::persistent,
       {msb_knob(), experimental_knob()},
       &make_aiter_v1},
      {"aiter-v1-adaptive",
       "v1.2 fill with a workload-adaptive split budget in auto mode (aiter PR #4899 sqrt rule, or #5212 width rule)",
       KernelKind::persistent,
       {msb_knob(),
        experimental_knob(),
        {"rule",
         {D::word("sqrt"), D::word("width")},
         "sqrt",
         "sqrt: NS = 1.2 x sum of sqrt(granules + OV) per tile (#4899); width: NS = 1.2 x sqrt(W x NS) (#5212)"},
        {"coef", {D::reals(0.01, 100)}, "1.2", "MLA_V12_SPLIT_COEF"}},
       &make_aiter_v1_adaptive},
      {"aiter-nonpersistent",
       "AITER mla_decode_fwd without persistent metadata: a grid of one workgroup per (request, split), KV dealt "
       "round-robin in 64/128-entry blocks, then the Triton stage-2 reduce",
       KernelKind::grid,
       {{"num_kv_splits",
         {D::word("auto"), D::integers(1, 1024)},
         "auto",
         "splits per request; auto = get_meta_param's rule (wave efficiency x HBM term over 1..16, fp8 caps)"},
        {"split_rule",
         {D::word("meta"), D::word("v0"), D::word("v0-intended")},
         "meta",
         "auto split count: meta = get_meta_param (Python); v0 = unmerged per-request v0 metadata as written "
         "(argmin); v0-intended = get_meta_param per request without fp8 caps"},
        {"block",
         {D::word("auto"), D::integer(64), D::integer(128)},
         "auto",
         "KV entries per round-robin block; auto = 128 for fp8 on gfx950, else 64"},
        {"cu_num",
         {D::word("auto"), D::integers(1, 4096)},
         "auto",
         "CU count the split rule assumes (env CU_NUM); auto = the clusters of the run"},
        {"graph_total_kv",
         {D::word("auto"), D::integers(1, 2000000000)},
         "auto",
         "total_kv the split rule saw at CUDA/HIP-graph capture (S frozen since); auto = this batch's"}},
       &make_aiter_nonpersistent},
      {"flashmla",
       "FlashMLA's tile scheduler: SM parts filled in order with equal payloads of 64-token blocks plus 5 blocks "
       "per request; one persistent CTA per (64-row q block, part), then the combine kernel",
       KernelKind::persistent,
       {{"parts", {D::word("auto"), D::integers(1, 4096)}, "auto", "num_sm_parts; auto = SMs / q blocks of 64 rows"},
        {"scheduler",
         {D::word("2025"), D::word("2026")},
         "2025",
         "2025 = get_mla_metadata of 2025-02 (< 4096 requests); 2026 = get_decoding_sched_meta (parts >= 1, no batch "
         "limit)"}},
       &make_flashmla},
      {"flashinfer-mla",
       "FlashInfer MLAPlan: KV cut into chunks of a limit derived from the KV per cluster, each chunk to the "
       "cheapest cluster (min-heap); persistent CTAs (clusters of 2 above 64 packed q rows), in-kernel merge",
       KernelKind::persistent,
       {},
       &make_flashinfer_mla},
      {"flashinfer-decode",
       "FlashInfer decode plan for its MLA decode kernel: the smallest KV chunk (>= 128 tokens) whose chunk count "
       "fits the grid; one CTA per (chunk, 16 heads), then the merge-states kernel",
       KernelKind::grid,
       {{"occupancy", {D::integers(1, 8)}, "1", "CTAs per SM the grid is sized for (max_grid = occupancy x SMs)"}},
       &make_flashinfer_decode},
      {"fixed",
       "N equal contiguous splits per request (Triton-style split-KV decode): one workgroup per (request, split), "
       "then a reduce kernel",
       KernelKind::grid,
       {{"splits", {D::integers(1, 1024)}, "4", "splits per request (fewer when a request is shorter than N granules)"},
        {"granule", {D::integers(1, 65536)}, "16", "pages each split's length is rounded up to"},
        {"heads_per_wg",
         {D::word("all"), D::integers(1, 128)},
         "all",
         "q heads per workgroup (must divide the heads); all = every head in one workgroup"}},
       &make_fixed},
  };
  return registry;
}

}  // namespace mlasim::sim
