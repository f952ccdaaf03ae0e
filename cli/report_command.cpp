// mlasim report: measured against predicted time for every measurement row, with the profile as it stands.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "measurement_options.h"
#include "mlasim/model/calibrator.h"
#include "mlasim/model/input_error.h"
#include "mlasim/validate/calibration_run.h"
#include "mlasim/validate/error_report.h"
#include "mlasim/validate/repeatability.h"
#include "mlasim/validate/timeline_comparison.h"
#include "mlasim/validate/timeline_summary.h"
#include "output.h"

namespace mlasim::cli {
namespace {

struct ReportOptions {
  MeasurementOptions measurements;
  std::string format = "text";
  bool rows = false;
  int held_out_every = 0;
  std::vector<std::string> timelines;  // files or directories
  std::string repeat;                  // a second session of the same configurations
  CLI::Option* gpu_flag = nullptr;
};

// One measured timeline against the prediction of its plan, work by work; several (or a directory of them), one
// line each and the errors pooled.
void report_timeline(const ReportOptions& o) {
  const std::string gpu = o.gpu_flag && o.gpu_flag->count() > 0 ? o.measurements.gpu : std::string();
  const bool several = o.timelines.size() > 1 || std::filesystem::is_directory(o.timelines.front());
  if (several && o.rows) throw InputError("rows", "takes one timeline file; several are summarized one line each");
  std::vector<std::string> skipped;
  const std::vector<validate::TimelineFile> files = validate::load_timeline_files(o.timelines, &skipped);
  for (const std::string& f : skipped) std::cerr << "note: " << f << " is not a measured timeline; left out\n";
  if (several) {
    std::vector<validate::TimelineSummaryRow> rows;
    for (const validate::TimelineFile& f : files) rows.push_back(validate::summarize_timeline(f, gpu));
    if (o.format == "json") return write_stdout(validate::timeline_summary_json(rows).dump(2) + "\n");
    return write_stdout(validate::timeline_summary_text(rows));
  }
  const validate::MeasuredTimeline& t = files.front().timeline;
  const validate::TimelineCheck check = validate::check_measured_timeline(t, gpu);
  if (o.format == "json") return write_stdout(validate::timeline_comparison_json(t, check, true).dump(2) + "\n");
  write_stdout(validate::timeline_comparison_text(t, check, o.rows));
}

void run_report(const ReportOptions& o) {
  check_format(o.format, {"text", "json"});
  if (!o.timelines.empty()) {
    if (!o.measurements.files.empty())
      throw InputError("timeline", "takes measured timelines; give either --timeline or --measurements");
    return report_timeline(o);
  }
  if (o.measurements.files.empty())
    throw InputError("measurements", "is required (measurement files), unless --timeline names measured timelines");
  const Gpu gpu = load_gpu(o.measurements.gpu);
  if (o.held_out_every < 0) throw InputError("held-out-every", "must be >= 0, got " + std::to_string(o.held_out_every));
  std::vector<validate::MeasurementRow> rows = o.measurements.rows_for(gpu);
  if (o.held_out_every > 1) {  // only the rows `calibrate --holdout-every n` kept out of its fit
    const std::vector<bool> held = every_nth_held_out(rows.size(), o.held_out_every);
    std::vector<validate::MeasurementRow> kept;
    for (size_t i = 0; i < rows.size(); ++i)
      if (held[i]) kept.push_back(std::move(rows[i]));
    rows = std::move(kept);
  }
  std::optional<validate::RepeatabilityStats> repeat;
  if (!o.repeat.empty()) {
    MeasurementOptions second = o.measurements;
    second.files = {o.repeat};
    repeat = validate::measurement_repeatability(rows, second.rows_for(gpu));
    if (repeat->matched == 0)
      throw InputError("repeat", o.repeat + ": holds none of the configurations of --measurements on " + gpu.name);
  }
  const validate::CalibrationRun run = validate::evaluate_profile(gpu, rows);
  if (o.format == "json") {
    nlohmann::ordered_json j = validate::error_report_json(run);
    if (repeat) j["repeatability"] = validate::repeatability_json(*repeat);
    return write_stdout(j.dump(2) + "\n");
  }
  write_stdout((o.rows ? validate::calibration_report_text(run) + "\n" : std::string()) +
               validate::error_report_text(run) + (repeat ? validate::repeatability_text(*repeat) : std::string()));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "prediction error of a GPU profile against measured times: per slice, speedup pairs, best-policy pick");
  opts->measurements.files_required = false;  // --timeline reports without them
  opts->measurements.add_to(*cmd);
  opts->gpu_flag = cmd->get_option("--gpu");
  cmd->add_option("--repeat", opts->repeat,
                  "a second measurement session of the same configurations: how well the measurements repeat, and "
                  "how often one session's fastest policy is within 3 % of the other's (the ceiling of a best pick)");
  cmd->add_option("--timeline", opts->timelines,
                  "a measured timeline (validate --timeline; .json or .json.gz): per-work duration and start error, "
                  "stage-1 tail, idle CUs, reduce and kernel time, measured against predicted on --gpu (default: "
                  "the timeline's GPU); several files or a directory: one line per timeline and the errors pooled");
  cmd->add_option("--format", opts->format, "text or json")->capture_default_str();
  cmd->add_flag("--rows", opts->rows, "text: every row's (with --timeline: every work's) error before the summary");
  cmd->add_option("--held-out-every", opts->held_out_every,
                  "report only the rows `calibrate --holdout-every N` held out of its fit (every N-th row of this "
                  "GPU, in file order); 0: every row");
  cmd->callback([opts] { run_report(*opts); });
}

}  // namespace mlasim::cli
