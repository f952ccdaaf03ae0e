#include "workload_options.h"

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::cli {

template <typename T>
void WorkloadOptions::flag(CLI::App& app, CLI::Option*& slot, const std::string& names, T& value,
                           const std::string& help) {
  slot = app.add_option(names, value, help);
}

void WorkloadOptions::add_to(CLI::App& app) {
  const sim::Workload d;
  app.add_option("--scenario", scenario_path_,
                 "scenario JSON (data/scenarios): its workload and policies; flags given beside it override");
  flag(app, gpu_opt_, "--gpu", gpu_,
       "GPU profile name (mi355x, mi350x, mi325x, mi300x, mi308x, h100, h200) or FILE.json [" + d.gpu + "]");
  flag(app, batch_opt_, "--batch", batch_,
       "requests in the batch (with --context) [" + std::to_string(d.batch.count) + "]");
  flag(app, context_opt_, "--context", context_,
       "KV tokens per request (with --batch) [" + std::to_string(d.batch.context) + "]");
  flag(app, kv_lens_opt_, "--kv-lens", kv_lens_, "KV tokens per request, comma list (overrides --batch/--context)");
  flag(app, qo_lens_opt_, "--qo-lens", qo_lens_, "query tokens per request, comma list (non-uniform MTP)");
  flag(app, clusters_opt_, "--clusters", clusters_, "clusters (CUs) available to the plan: 0 = all, or 1..CUs [0]");
  add_shape_to(app);
}

void WorkloadOptions::add_shape_to(CLI::App& app) {
  const sim::Workload d;
  flag(app, qo_len_opt_, "--qo-len", qo_len_, "query tokens per request (1 = plain decode, >1 = MTP) [1]");
  flag(app, heads_opt_, "--heads", heads_, "q heads [" + std::to_string(d.heads) + "]");
  flag(app, kv_heads_opt_, "--kv-heads", kv_heads_, "kv heads (MLA: 1) [1]");
  flag(app, q_dtype_opt_, "--q-dtype", q_dtype_, "fp8 or bf16 [fp8]");
  flag(app, kv_dtype_opt_, "--kv-dtype", kv_dtype_, "fp8 or bf16 [fp8]");
  flag(app, page_size_opt_, "--page-size", page_size_, "tokens per KV page (power of two) [1]");
  flag(app, kv_granularity_opt_, "--kv-granularity", kv_granularity_,
       "planner granule in pages (power of two; default max(page size, 16))");
  causal_opt_ = app.add_flag("--causal,!--no-causal", causal_, "causal masking for qlen > 1 (default on)");
  flag(app, topk_opt_, "--topk", topk_,
       "sparse (DSA) decode: KV rows each query token selects, e.g. 2048; 0 = dense [0]");
  flag(app, topk_lens_opt_, "--topk-lens", topk_lens_,
       "sparse decode: rows each request's tokens select, comma list (<= --topk; FlashMLA's topk_length)");
  flag(app, dsv4_opt_, "--dsv4", dsv4_,
       "DeepSeek-V4's two scopes, by layer kind: csa (window 128 + compressed 1/4, top 1024), hca (window 128 + "
       "compressed 1/128, all), swa (window 128), or off [off]");
  flag(app, window_opt_, "--window", window_, "two scopes: rows of the sliding window (0 = off)");
  flag(app, compress_ratio_opt_, "--compress-ratio", compress_ratio_,
       "two scopes: tokens per compressed row (0 = no compressed scope)");
  flag(app, extra_topk_opt_, "--extra-topk", extra_topk_,
       "two scopes: compressed rows the indexer selects (0 = every committed one)");
  flag(app, scope_run_opt_, "--scope-run", scope_run_,
       "two scopes: one-pass (one index list per token) or merged (a stream per scope, then an LSE merge) "
       "[one-pass]");
}

std::optional<sim::Scenario> WorkloadOptions::scenario() const {
  if (scenario_path_.empty()) return std::nullopt;
  return sim::load_scenario(scenario_path_);
}

sim::Workload WorkloadOptions::workload(const std::optional<sim::Scenario>& scenario) const {
  sim::Workload w = scenario ? scenario->workload : sim::Workload{};
  if (given(gpu_opt_)) w.gpu = gpu_;
  if (given(kv_lens_opt_)) {
    w.batch = sim::BatchSpec::list(parse_int_list(kv_lens_, "kv-lens"));
  } else if (given(batch_opt_) || given(context_opt_)) {
    if (given(batch_opt_) && batch_ < 1) throw InputError("batch", "must be >= 1, got " + std::to_string(batch_));
    if (given(context_opt_) && context_ < 1)
      throw InputError("context", "must be >= 1 token, got " + std::to_string(context_));
    if (!given(context_opt_) && w.batch.kind != sim::BatchSpec::Kind::uniform)
      throw InputError("context", "give --context with --batch: the scenario's lengths are not uniform");
    w.batch = sim::BatchSpec::uniform(given(batch_opt_) ? batch_ : w.batch.size(),
                                      given(context_opt_) ? context_ : w.batch.context);
  }
  if (given(qo_len_opt_)) {
    if (qo_len_ < 1) throw InputError("qo-len", "must be >= 1, got " + std::to_string(qo_len_));
    w.qlen = qo_len_;
    w.qo_lens.clear();
  }
  if (given(qo_lens_opt_)) {
    w.qo_lens = parse_int_list(qo_lens_, "qo-lens");
    if (static_cast<int>(w.qo_lens.size()) != w.batch.size())
      throw InputError("qo-lens", "has " + std::to_string(w.qo_lens.size()) + " entries for " +
                                      std::to_string(w.batch.size()) + " requests");
  }
  if (given(heads_opt_)) w.heads = heads_;
  if (given(kv_heads_opt_)) w.kv_heads = kv_heads_;
  if (given(q_dtype_opt_)) w.q_dtype = parse_dtype(q_dtype_, "q-dtype");
  if (given(kv_dtype_opt_)) w.kv_dtype = parse_dtype(kv_dtype_, "kv-dtype");
  if (given(page_size_opt_)) w.page_size = page_size_;
  if (given(kv_granularity_opt_)) {
    if (kv_granularity_ < 0)
      throw InputError("kv-granularity", "must be a power of two, got " + std::to_string(kv_granularity_));
    w.kv_granularity = kv_granularity_ > 0 ? std::optional<int>(kv_granularity_) : std::nullopt;
  }
  if (given(causal_opt_)) w.causal = causal_;
  if (given(clusters_opt_)) w.clusters = clusters_;
  if (given(topk_opt_)) {
    w.topk = topk_;       // its range is DecodeBatch::validate's, like every other shape field's
    w.topk_lens.clear();  // a scenario's per-request lengths belong to its top-k; --topk-lens gives new ones
  }
  if (given(topk_lens_opt_)) {
    w.topk_lens = parse_int_list(topk_lens_, "topk-lens");
    if (static_cast<int>(w.topk_lens.size()) != w.batch.size())
      throw InputError("topk-lens", "has " + std::to_string(w.topk_lens.size()) + " entries for " +
                                        std::to_string(w.batch.size()) + " requests");
  }
  if (given(dsv4_opt_)) w.scopes = dsv4_ == "off" ? TwoScopes{} : TwoScopes::preset(dsv4_);
  if (given(window_opt_)) w.scopes.window = window_;  // ranges: TwoScopes::validate, with the batch
  if (given(compress_ratio_opt_)) w.scopes.compress_ratio = compress_ratio_;
  if (given(extra_topk_opt_)) w.scopes.extra_topk = extra_topk_;
  if (given(scope_run_opt_)) w.scopes.run = parse_scope_run(scope_run_, "scope-run");
  return w;
}

std::string choose_policy(const CLI::Option* flag, const std::string& value, const std::optional<sim::Scenario>& s,
                          const std::string& name, size_t fallback_index, const std::string& fallback) {
  if (flag && flag->count() > 0) return value;
  if (s) return s->spec(name, fallback_index);
  return fallback;
}

}  // namespace mlasim::cli
