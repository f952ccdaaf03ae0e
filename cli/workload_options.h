#pragma once
// The workload flags every command shares (--gpu, --batch/--context or --kv-lens, heads, dtypes, ...) and
// --scenario FILE: the workload is the scenario's (or the built-in default), with every flag given beside it
// applied on top.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "mlasim/sim/scenario.h"
#include "mlasim/sim/workload.h"

namespace mlasim::cli {

class WorkloadOptions {
 public:
  // All workload flags and --scenario.
  void add_to(CLI::App& app);
  // Only the shape flags (qo-len, heads, kv-heads, dtypes, page size, granularity, causal, top-k, DeepSeek-V4's
  // scopes): for commands that
  // take the batch, context, GPU and clusters as lists of their own (sweep).
  void add_shape_to(CLI::App& app);

  // The scenario named by --scenario, read and checked; nullopt without one.
  std::optional<sim::Scenario> scenario() const;
  // The workload: the scenario's (or the defaults) with the given flags applied. Throws InputError naming the flag.
  sim::Workload workload(const std::optional<sim::Scenario>& scenario) const;
  // Whether --topk-lens was given (a sweep, which varies the batch, refuses it before reading it).
  bool gives_topk_lens() const { return given(topk_lens_opt_); }

 private:
  template <typename T>
  void flag(CLI::App& app, CLI::Option*& slot, const std::string& names, T& value, const std::string& help);
  static bool given(const CLI::Option* o) { return o && o->count() > 0; }

  std::string scenario_path_;
  std::string gpu_;
  int batch_ = 0, context_ = 0;
  std::string kv_lens_, qo_lens_, topk_lens_;
  int topk_ = 0;
  std::string dsv4_, scope_run_;
  int window_ = 0, compress_ratio_ = 0, extra_topk_ = 0;
  int qo_len_ = 0, heads_ = 0, kv_heads_ = 0, page_size_ = 0, kv_granularity_ = 0, clusters_ = 0;
  std::string q_dtype_, kv_dtype_;
  bool causal_ = true;

  CLI::Option *gpu_opt_ = nullptr, *batch_opt_ = nullptr, *context_opt_ = nullptr, *kv_lens_opt_ = nullptr,
              *qo_lens_opt_ = nullptr, *qo_len_opt_ = nullptr, *heads_opt_ = nullptr, *kv_heads_opt_ = nullptr,
              *q_dtype_opt_ = nullptr, *kv_dtype_opt_ = nullptr, *page_size_opt_ = nullptr,
              *kv_granularity_opt_ = nullptr, *causal_opt_ = nullptr, *clusters_opt_ = nullptr, *topk_opt_ = nullptr,
              *topk_lens_opt_ = nullptr, *dsv4_opt_ = nullptr, *window_opt_ = nullptr, *compress_ratio_opt_ = nullptr,
              *extra_topk_opt_ = nullptr, *scope_run_opt_ = nullptr;
};

// The policy of a command: the flag when given, else the scenario's policy `name` (or the one at
// `fallback_index`), else `fallback`.
std::string choose_policy(const CLI::Option* flag, const std::string& value, const std::optional<sim::Scenario>& s,
                          const std::string& name, size_t fallback_index, const std::string& fallback);

}  // namespace mlasim::cli
