// The aiter-v1 and aiter-v1-adaptive policies: the v1.2 planner fed as a serving engine feeds it.
#include <algorithm>
#include <optional>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/int_math.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {

int vllm_max_split_per_batch(int heads, int num_cu, int batch) {
  if (heads < 128) return -1;
  return std::max(1, std::min(static_cast<int>(cdiv(num_cu, batch)), 32));
}

AiterV1Args make_aiter_v1_args(const PlanRequest& r) {
  const DecodeBatch& batch = r.batch;
  batch.validate();
  if (r.clusters < 0 || r.clusters > r.gpu.num_cu)
    throw InputError("clusters", "must be 1.." + std::to_string(r.gpu.num_cu) + " (the GPU's CUs), got " +
                                     std::to_string(r.clusters));
  AiterV1Args a;
  a.arch = r.arch;
  a.num_cu = r.clusters > 0 ? r.clusters : r.gpu.num_cu;
  a.q_dtype = batch.q_dtype;
  a.kv_dtype = batch.kv_dtype;
  a.num_heads_per_head_k = batch.q_heads;
  a.num_heads_k = batch.kv_heads;
  a.is_causal = batch.causal;
  a.page_size = batch.page_size;
  a.kv_granularity = batch.kv_granularity;
  a.max_seqlen_qo = batch.max_qo_len();
  a.uni_seqlen_qo = batch.uniform_qo_len();
  const int n = batch.size();
  a.seqlens_qo_indptr.resize(static_cast<size_t>(n) + 1);
  a.seqlens_kv_indptr.resize(static_cast<size_t>(n) + 1);
  a.kv_last_page_lens.resize(static_cast<size_t>(n));
  a.seqlens_qo_indptr[0] = a.seqlens_kv_indptr[0] = 0;
  for (int i = 0; i < n; ++i) {
    a.seqlens_qo_indptr[i + 1] = a.seqlens_qo_indptr[i] + batch.qo_lens[i];
    a.seqlens_kv_indptr[i + 1] = a.seqlens_kv_indptr[i] + batch.pages(i);
    a.kv_last_page_lens[i] = batch.last_page_len(i);
  }
  return a;
}

namespace {

// The knobs of aiter-v1 and aiter-v1-adaptive, read once.
struct AiterV1Knobs {
  std::optional<int> max_split_per_batch;  // nullopt: vLLM's rule for the request's heads, CUs and batch
  bool experimental = false;
  SplitBudget budget = SplitBudget::flat;
  float coef = 1.2f;
};

class AiterV1Policy final : public SplitPolicy {
 public:
  AiterV1Policy(const PolicySpec& spec, AiterV1Knobs knobs) : SplitPolicy(spec), k_(knobs) {}

  KernelKind kernel() const override { return KernelKind::persistent; }
  GatheredRows sparse_rows() const override { return GatheredRows::selected; }

  // get_mla_metadata_info_v1's sizes for the largest batch (for a sparse one: its query tokens, query length 1,
  // is_sparse), and the fp32 partial outputs mla_decode_fwd allocates from reduce_partial_map; sparse steps add
  // the [tokens, top-k] kv_indices buffer vLLM allocates once.
  std::optional<GraphBuffers> graph_buffers(const PlanRequest& largest) const override {
    const AiterV1Args a = args_for(largest);
    const BufferSizes s = aiter_v1_buffer_sizes(a);
    const int64_t heads = largest.batch.q_heads, rows = int64_t{s.reduce_partial_map} * a.max_seqlen_qo;
    GraphBuffers g;
    g.policy = spec();
    g.buffers = {
        {"work_metadata_ptrs", {s.work_metadata_ptrs}, "uint64", BufferNeed::none},
        {"work_indptr", {s.work_indptr}, "int32", BufferNeed::work_lists_plus_one},
        {"work_info_set", {s.work_info_rows, 8}, "int32", BufferNeed::works},
        {"reduce_indptr", {s.reduce_indptr}, "int32", BufferNeed::reduce_tiles_plus_one},
        {"reduce_final_map", {s.reduce_final_map_rows, 2}, "int32", BufferNeed::reduce_tiles},
        {"reduce_partial_map", {s.reduce_partial_map}, "int32", BufferNeed::partials},
        {"logits", {rows, 1, heads, DecodeBatch::kVHeadDim}, "fp32", BufferNeed::partial_rows},
        {"lse", {rows, 1, heads, 1}, "fp32", BufferNeed::partial_rows},
    };
    if (largest.batch.is_sparse())
      g.buffers.push_back(
          {"kv_indices", {largest.batch.total_qo_tokens() * largest.batch.topk}, "int32", BufferNeed::kv_rows});
    return g;
  }

 private:
  // vLLM's and ATOM's sparse backends plan each query token's selected rows and pass no split cap.
  bool schedules_sparse_batches() const override { return true; }

  Plan build_plan(const PlanRequest& r) const override { return plan_aiter_v1(args_for(r)); }

  // The planner's arguments as the serving engine passes them: a sparse batch as its query tokens' selected rows
  // with no split cap; a dense one with vLLM's cap (each unless the knob sets one).
  AiterV1Args args_for(const PlanRequest& r) const {
    const bool sparse = r.batch.is_sparse();
    AiterV1Args a = sparse ? make_aiter_v1_args(PlanRequest{gathered_batch(r.batch, GatheredRows::selected), r.gpu,
                                                            r.clusters, r.arch})
                           : make_aiter_v1_args(r);
    const int heads = r.batch.q_heads, batches = static_cast<int>(a.seqlens_kv_indptr.size()) - 1;
    a.max_split_per_batch = k_.max_split_per_batch ? *k_.max_split_per_batch
                            : sparse               ? -1
                                                   : vllm_max_split_per_batch(heads, a.num_cu, batches);
    a.experimental = k_.experimental;
    a.budget = k_.budget;
    a.split_coef = k_.coef;
    return a;
  }

  AiterV1Knobs k_;
};

AiterV1Knobs common_knobs(const KnobValues& k) {
  AiterV1Knobs knobs;
  knobs.max_split_per_batch = k.integer_or_derived<int>("max_split_per_batch");
  knobs.experimental = k.integer("experimental") != 0;
  return knobs;
}

}  // namespace

std::unique_ptr<SplitPolicy> make_aiter_v1(const KnobValues& k) {
  return std::make_unique<AiterV1Policy>(k.spec(), common_knobs(k));
}

std::unique_ptr<SplitPolicy> make_aiter_v1_adaptive(const KnobValues& k) {
  AiterV1Knobs knobs = common_knobs(k);
  knobs.budget = k.word("rule") == "width" ? SplitBudget::machine_width : SplitBudget::adaptive_sqrt;
  knobs.coef = static_cast<float>(k.real("coef"));
  return std::make_unique<AiterV1Policy>(k.spec(), knobs);
}

}  // namespace mlasim::sim
