// mlasim buffers: the metadata and partial-output buffers a graph-captured decode step allocates once, per
// policy, for the largest batch it will run; --fit plans the workload's batch and checks that it fits them.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/graph_buffers.h"
#include "mlasim/sim/split_policy.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct BuffersOptions {
  WorkloadOptions workload;
  std::vector<std::string> policies{"aiter-v1"};
  int max_batch = 0;
  CLI::Option* max_batch_flag = nullptr;
  bool fit = false;
  std::string format = "text";
};

// Whether a policy sizes graph buffers at all, asked of a plain batch every sizing rule takes.
bool has_sizing_rule(const sim::SplitPolicy& policy) {
  const DecodeBatch one = DecodeBatch::uniform(1, 1);
  return policy.graph_buffers(sim::PlanRequest{one, *sim::gpu_profile("mi355x"), 0}).has_value();
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return "[" + fmt::format("{}", fmt::join(shape, ", ")) + "]";
}

std::string mib(int64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }

void run_buffers(const BuffersOptions& o) {
  check_format(o.format, {"text", "json"});
  const auto scenario = o.workload.scenario();
  const sim::Workload w = o.workload.workload(scenario);
  const sim::WorkloadContext ctx = sim::resolve(w);
  if (ctx.batch.scopes.on())
    throw InputError("dsv4",
                     "buffers sizes dense and top-k steps; no public sizing rule for DeepSeek-V4's two "
                     "scopes is known (docs/sparse.md)");
  constexpr int kMaxRequests = 65536;  // as a workload's batch
  if (o.max_batch_flag->count() > 0 && (o.max_batch < 1 || o.max_batch > kMaxRequests))
    throw InputError("max-batch",
                     "must be 1.." + std::to_string(kMaxRequests) + " requests, got " + std::to_string(o.max_batch));
  const int max_batch = o.max_batch_flag->count() > 0 ? o.max_batch : ctx.batch.size();
  if (o.fit && ctx.batch.size() > max_batch)
    throw InputError("max-batch", "is " + std::to_string(max_batch) + " but the batch to fit has " +
                                      std::to_string(ctx.batch.size()) + " requests");
  // The largest batch: sizes depend on the request count, the query length, the shape and the top-k only.
  DecodeBatch largest = ctx.batch;
  const int qlen = ctx.batch.max_qo_len();
  largest.kv_lens.assign(static_cast<size_t>(max_batch), qlen);
  largest.qo_lens.assign(static_cast<size_t>(max_batch), qlen);
  largest.topk_lens.clear();

  nlohmann::json out = nlohmann::json::array();
  std::string text;
  for (const std::string& spec : o.policies) {
    const auto policy = sim::make_policy(spec);
    const auto buffers = policy->graph_buffers(sim::PlanRequest{largest, ctx.gpu, ctx.clusters});
    if (!buffers)
      throw InputError("policy", policy->name() + " has no graph-safe sizing rule; policies with one: " +
                                     sim::policy_names(has_sizing_rule));
    std::optional<sim::Plan> plan;
    if (o.fit) {
      plan = policy->plan(sim::PlanRequest{ctx.batch, ctx.gpu, ctx.clusters});
      sim::check_plan_fits(*plan, *buffers);
    }
    nlohmann::json j = {{"policy", buffers->policy},
                        {"gpu", ctx.gpu.name},
                        {"max_batch", max_batch},
                        {"qlen", qlen},
                        {"heads", ctx.batch.q_heads},
                        {"topk", ctx.batch.topk},
                        {"total_bytes", buffers->total_bytes()},
                        {"buffers", nlohmann::json::array()}};
    text += fmt::format("{} on {}: buffers for up to {} requests x qlen {}, {} heads, {}/{}{}\n", buffers->policy,
                        ctx.gpu.name, max_batch, qlen, ctx.batch.q_heads, dtype_name(ctx.batch.q_dtype),
                        dtype_name(ctx.batch.kv_dtype),
                        ctx.batch.is_sparse() ? fmt::format(", top-k {}", ctx.batch.topk) : std::string());
    text += fmt::format("  {:<20} {:<22} {:<7} {:>14}{}\n", "buffer", "shape", "dtype", "bytes",
                        o.fit ? "   this batch uses" : "");
    for (const sim::GraphBuffer& b : buffers->buffers) {
      nlohmann::json jb = {{"name", b.name}, {"shape", b.shape}, {"dtype", b.dtype}, {"bytes", b.bytes()}};
      std::string used;
      if (plan && b.need != sim::BufferNeed::none) {
        const int64_t need = sim::plan_need(*plan, b.need);
        jb["used_rows"] = need;
        used = fmt::format("   {} of {} rows", need, b.capacity());
      }
      j["buffers"].push_back(std::move(jb));
      text += fmt::format("  {:<20} {:<22} {:<7} {:>14}{}\n", b.name, shape_text(b.shape), b.dtype, b.bytes(), used);
    }
    text += fmt::format("  {:<20} {:<22} {:<7} {:>14}   ({})\n", "total", "", "", buffers->total_bytes(),
                        mib(buffers->total_bytes()));
    if (plan) {
      j["fits"] = true;
      text += fmt::format("  this batch ({} requests, {} works, {} partials) fits\n", ctx.batch.size(),
                          plan->num_works(), plan->num_partials());
    }
    out.push_back(std::move(j));
  }
  write_stdout(o.format == "json" ? out.dump(2) + "\n" : text);
}

}  // namespace

void add_buffers_command(CLI::App& app) {
  auto opts = std::make_shared<BuffersOptions>();
  CLI::App* cmd = app.add_subcommand(
      "buffers", "graph-safe metadata and partial buffer sizes per policy for a largest batch (and --fit checks one)");
  opts->workload.add_to(*cmd);
  cmd->add_option("--policy", opts->policies, "policy spec(s) to size, repeatable [aiter-v1]")->take_all();
  opts->max_batch_flag =
      cmd->add_option("--max-batch", opts->max_batch, "most requests a step will hold [the workload's batch]");
  cmd->add_flag("--fit", opts->fit,
                "plan the workload's batch and check it fits the buffers (else exit 2, naming one)");
  cmd->add_option("--format", opts->format, "text or json")->capture_default_str();
  cmd->callback([opts] { run_buffers(*opts); });
}

}  // namespace mlasim::cli
