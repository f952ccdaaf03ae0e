// mlasim report: measured against predicted time for every measurement row, with the profile as it stands.
#include <memory>

#include "commands.h"
#include "measurement_options.h"
#include "mlasim/validate/calibration_run.h"
#include "mlasim/validate/error_report.h"
#include "output.h"

namespace mlasim::cli {
namespace {

struct ReportOptions {
  MeasurementOptions measurements;
  std::string format = "text";
  bool rows = false;
};

void run_report(const ReportOptions& o) {
  check_format(o.format, {"text", "json"});
  const Gpu gpu = load_gpu(o.measurements.gpu);
  const validate::CalibrationRun run = validate::evaluate_profile(gpu, o.measurements.rows_for(gpu));
  if (o.format == "json") return write_stdout(validate::error_report_json(run).dump(2) + "\n");
  write_stdout((o.rows ? validate::calibration_report_text(run) + "\n" : std::string()) +
               validate::error_report_text(run));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "prediction error of a GPU profile against measured times: per slice, speedup pairs, best-policy pick");
  opts->measurements.add_to(*cmd);
  cmd->add_option("--format", opts->format, "text or json")->capture_default_str();
  cmd->add_flag("--rows", opts->rows, "text: every row's error before the summary tables");
  cmd->callback([opts] { run_report(*opts); });
}

}  // namespace mlasim::cli
