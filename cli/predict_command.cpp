// mlasim predict: the predicted kernel time, occupancy, splits and reduce cost of one policy on one workload.
#include <memory>

#include "commands.h"
#include "labelled_prediction.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/plan_text.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct PredictOptions {
  WorkloadOptions workload;
  std::string policy = "aiter-v1";
  std::string format = "text";
  bool timeline = false;
};

const char* kernel_name(sim::KernelKind k) {
  return k == sim::KernelKind::persistent ? "persistent kernel" : "grid kernel";
}

void run_predict(const PredictOptions& o) {
  check_format(o.format, {"text", "json", "csv"});
  const DecodeBatch batch = o.workload.make_batch();
  const Gpu gpu = o.workload.load();
  const LabelledPrediction p = predict_labelled(batch, gpu, o.workload.clusters, o.policy);
  if (o.format == "json") {
    nlohmann::json j = labelled_json(p.labelled);
    if (o.timeline) j["timeline"] = sim::timeline_to_json(p.prediction.timeline);
    write_stdout(j.dump(2) + "\n");
  } else if (o.format == "csv") {
    write_stdout(labelled_csv_header() + "\n" + labelled_csv_row(p.labelled) + "\n");
  } else {
    write_stdout(sim::describe_workload(batch, gpu, o.workload.clusters) + "\npolicy " + p.plan.policy + " (" +
                 kernel_name(p.plan.kernel) + ")\n" + sim::metrics_text(p.prediction.metrics));
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto opts = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand("predict", "predict kernel time, occupancy, splits and reduce cost of a policy");
  opts->workload.add_to(*cmd);
  cmd->add_option("--policy", opts->policy, "policy spec NAME[:key=value,...], e.g. aiter-v1:max_split_per_batch=16")
      ->capture_default_str();
  cmd->add_option("--format", opts->format, "text, json or csv")->capture_default_str();
  cmd->add_flag("--timeline", opts->timeline, "json: add the per-cluster timeline");
  cmd->callback([opts] { run_predict(*opts); });
}

}  // namespace mlasim::cli
