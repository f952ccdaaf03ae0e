// mlasim compare: two policies (or one policy on two GPUs) on the same workload, side by side, and the speedup.
#include <memory>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/plan_text.h"
#include "mlasim/sim/report.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct CompareOptions {
  WorkloadOptions workload;
  std::string policy = "aiter-v1";
  std::string vs;
  CLI::Option* policy_flag = nullptr;
  CLI::Option* vs_flag = nullptr;
  std::string vs_gpu;  // B's GPU; default: the same as A's
  std::string format = "text";
};

void run_compare(const CompareOptions& o) {
  const auto writer = sim::make_report_writer(o.format);
  const auto scenario = o.workload.scenario();
  if (!scenario && o.vs_flag->count() == 0)
    throw InputError("vs", "needs policy B (a spec), or a --scenario that names policies A and B");
  const sim::Workload workload = o.workload.workload(scenario);
  const sim::WorkloadContext ctx_a = sim::resolve(workload);
  sim::Workload workload_b = workload;
  if (!o.vs_gpu.empty()) workload_b.gpu = o.vs_gpu;
  const sim::WorkloadContext ctx_b = sim::resolve(workload_b);
  const std::string spec_a = choose_policy(o.policy_flag, o.policy, scenario, "A", 0, "aiter-v1");
  const std::string spec_b = choose_policy(o.vs_flag, o.vs, scenario, "B", 1, "");
  const sim::Comparison c = sim::Comparison::of(sim::report_row(sim::evaluate(spec_a, ctx_a), ctx_a),
                                                sim::report_row(sim::evaluate(spec_b, ctx_b), ctx_b));
  const std::string heading =
      o.format == "text" ? sim::describe_workload(ctx_a.batch, ctx_a.gpu, ctx_a.clusters) + "\n" : std::string();
  write_stdout(heading + writer->comparison(c));
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "two policies on one workload side by side, and the speedup");
  opts->workload.add_to(*cmd);
  opts->policy_flag =
      cmd->add_option("--policy", opts->policy, "policy A (spec NAME[:key=value,...]) [aiter-v1, or the scenario's A]");
  opts->vs_flag =
      cmd->add_option("--vs", opts->vs, "policy B (spec); speedup = A's kernel_us / B's kernel_us [the scenario's B]");
  cmd->add_option("--vs-gpu", opts->vs_gpu, "GPU profile for B (default: --gpu)");
  cmd->add_option("--format", opts->format, "text, json or csv")->capture_default_str();
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace mlasim::cli
