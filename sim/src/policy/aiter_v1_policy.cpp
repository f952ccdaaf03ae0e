// The aiter-v1 and aiter-v1-adaptive policies: the v1.2 planner fed as a serving engine feeds it.
#include <algorithm>

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

class AiterV1Policy final : public SplitPolicy {
 public:
  AiterV1Policy(std::string name, int msb, bool experimental, SplitBudget budget, float coef)
      : name_(std::move(name)), msb_(msb), experimental_(experimental), budget_(budget), coef_(coef) {}

  std::string name() const override { return name_; }
  KernelKind kernel() const override { return KernelKind::persistent; }

  Plan plan(const PlanRequest& r) const override {
    AiterV1Args a = make_aiter_v1_args(r);
    a.max_split_per_batch = msb_ != 0 ? msb_ : vllm_max_split_per_batch(r.batch.q_heads, a.num_cu, r.batch.size());
    a.experimental = experimental_;
    a.budget = budget_;
    a.split_coef = coef_;
    Plan p = plan_aiter_v1(a);
    p.policy = name_;
    return p;
  }

 private:
  std::string name_;
  int msb_;  // 0 = vLLM's rule
  bool experimental_;
  SplitBudget budget_;
  float coef_;
};

int parse_msb(const std::map<std::string, std::string>& k) {
  const auto& v = k.at("max_split_per_batch");
  return v == "vllm" ? 0 : static_cast<int>(knob_int(k, "max_split_per_batch"));
}

}  // namespace

std::unique_ptr<SplitPolicy> make_aiter_v1(const std::map<std::string, std::string>& k) {
  return std::make_unique<AiterV1Policy>("aiter-v1", parse_msb(k), knob_int(k, "experimental") != 0,
                                         SplitBudget::flat, 1.2f);
}

std::unique_ptr<SplitPolicy> make_aiter_v1_adaptive(const std::map<std::string, std::string>& k) {
  const SplitBudget rule = k.at("rule") == "width" ? SplitBudget::machine_width : SplitBudget::adaptive_sqrt;
  return std::make_unique<AiterV1Policy>("aiter-v1-adaptive", parse_msb(k), knob_int(k, "experimental") != 0, rule,
                                         static_cast<float>(knob_real(k, "coef")));
}

}  // namespace mlasim::sim
