// mlasim predict: the predicted kernel time, occupancy, splits and reduce cost of one policy on one workload.
#include <memory>

#include "commands.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/plan_text.h"
#include "mlasim/sim/prediction_band.h"
#include "mlasim/sim/report.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct PredictOptions {
  WorkloadOptions workload;
  std::string policy = "aiter-v1";
  CLI::Option* policy_flag = nullptr;
  std::string format = "text";
  bool timeline = false;
};

const char* kernel_name(sim::KernelKind k) {
  return k == sim::KernelKind::persistent ? "persistent kernel" : "grid kernel";
}

void run_predict(const PredictOptions& o) {
  const auto writer = sim::make_report_writer(o.format);
  const auto scenario = o.workload.scenario();
  const sim::WorkloadContext ctx = sim::resolve(o.workload.workload(scenario));
  const sim::Evaluation e = sim::evaluate(choose_policy(o.policy_flag, o.policy, scenario, "A", 0, "aiter-v1"), ctx);
  const sim::ReportRow row = sim::report_row(e, ctx);
  const sim::PredictionBand band = sim::prediction_band(*e.plan, ctx.batch, ctx.gpu, ctx.params, e.prediction->metrics);
  if (o.format == "json") {
    nlohmann::json j = sim::report_json(row);
    j["kernel_class"] = band.kernel_class;
    // What stage 1 reads from memory (pass re-reads included): the L2 write-back's window (sim/l2_writeback.h).
    j["stage1_read_bytes"] = e.prediction->metrics.stage1_read_bytes;
    j["uncertainty"] = {{"calibrated", band.calibrated},
                        {"sigma_pct", band.sigma_pct},
                        {"params_pct", band.params_pct},
                        {"held_out_pct", band.has_residual ? nlohmann::json(band.residual_pct) : nlohmann::json()},
                        {"kernel_us_low", band.low_us()},
                        {"kernel_us_high", band.high_us()}};
    if (o.timeline) j["timeline"] = sim::timeline_to_json(e.prediction->timeline);
    write_stdout(j.dump(2) + "\n");
  } else if (o.format == "text") {
    write_stdout(sim::describe_workload(ctx.batch, ctx.gpu, ctx.clusters) + "\npolicy " + row.policy + " (" +
                 kernel_name(e.plan->kernel) + ", kernel class " + band.kernel_class + ")\n" + writer->row(row) +
                 sim::prediction_band_text(band, ctx.gpu.name));
  } else {
    write_stdout(writer->row(row));
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto opts = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand("predict", "predict kernel time, occupancy, splits and reduce cost of a policy");
  opts->workload.add_to(*cmd);
  opts->policy_flag = cmd->add_option("--policy", opts->policy,
                                      "policy spec NAME[:key=value,...], e.g. aiter-v1:max_split_per_batch=16 "
                                      "[aiter-v1, or the scenario's A]");
  cmd->add_option("--format", opts->format, "text, json or csv")->capture_default_str();
  cmd->add_flag("--timeline", opts->timeline, "json: add the per-cluster timeline");
  cmd->callback([opts] { run_predict(*opts); });
}

}  // namespace mlasim::cli
