// mlasim compare: two policies (or one policy on two GPUs) on the same workload, side by side, and the speedup.
#include <fmt/format.h>
#include <memory>
#include <sstream>

#include "commands.h"
#include "labelled_prediction.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/plan_text.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct CompareOptions {
  WorkloadOptions workload;
  std::string policy = "aiter-v1";
  std::string vs;
  std::string vs_gpu;  // B's GPU; default: the same as A's
  std::string format = "text";
};

// metrics_text's lines split into (name, value), so both columns use the one formatter.
std::vector<std::pair<std::string, std::string>> metric_lines(const sim::Metrics& m) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(sim::metrics_text(m));
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const size_t value = line.find_first_not_of(' ', space);
    out.emplace_back(line.substr(0, space), value == std::string::npos ? "" : line.substr(value));
  }
  return out;
}

std::string side_by_side(const LabelledMetrics& a, const LabelledMetrics& b) {
  const auto la = metric_lines(a.metrics), lb = metric_lines(b.metrics);
  std::string out = fmt::format("{:<20} {:<32} {}\n", "", "A", "B");
  out += fmt::format("{:<20} {:<32} {}\n", "policy", a.policy, b.policy);
  if (a.gpu != b.gpu) out += fmt::format("{:<20} {:<32} {}\n", "gpu", a.gpu, b.gpu);
  for (size_t i = 0; i < la.size() && i < lb.size(); ++i)
    out += fmt::format("{:<20} {:<32} {}\n", la[i].first, la[i].second, lb[i].second);
  return out;
}

void run_compare(const CompareOptions& o) {
  check_format(o.format, {"text", "json", "csv"});
  const DecodeBatch batch = o.workload.make_batch();
  const Gpu gpu_a = o.workload.load();
  WorkloadOptions workload_b = o.workload;
  if (!o.vs_gpu.empty()) workload_b.gpu = o.vs_gpu;
  const Gpu gpu_b = workload_b.load();
  const LabelledMetrics a = predict_labelled(batch, gpu_a, o.workload.clusters, o.policy).labelled;
  const LabelledMetrics b = predict_labelled(batch, gpu_b, o.workload.clusters, o.vs).labelled;
  const double speedup = a.metrics.kernel_us / b.metrics.kernel_us;
  if (o.format == "json") {
    const nlohmann::json j{{"a", labelled_json(a)}, {"b", labelled_json(b)}, {"speedup", speedup}};
    write_stdout(j.dump(2) + "\n");
  } else if (o.format == "csv") {
    write_stdout(fmt::format("side,{},speedup\nA,{},{}\nB,{},{}\n", labelled_csv_header(), labelled_csv_row(a),
                             speedup, labelled_csv_row(b), speedup));
  } else {
    write_stdout(sim::describe_workload(batch, gpu_a, o.workload.clusters) + "\n" + side_by_side(a, b) +
                 fmt::format("speedup (A kernel_us / B kernel_us): {:.3f}\n", speedup));
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "two policies on one workload side by side, and the speedup");
  opts->workload.add_to(*cmd);
  cmd->add_option("--policy", opts->policy, "policy A (spec NAME[:key=value,...])")->capture_default_str();
  cmd->add_option("--vs", opts->vs, "policy B (spec); speedup = A's kernel_us / B's kernel_us")->required();
  cmd->add_option("--vs-gpu", opts->vs_gpu, "GPU profile for B (default: --gpu)");
  cmd->add_option("--format", opts->format, "text, json or csv")->capture_default_str();
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace mlasim::cli
