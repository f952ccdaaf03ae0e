// mlasim calibrate: fit a GPU profile's cost-model parameters to measured times and write the fitted profile.
#include <chrono>
#include <fmt/format.h>
#include <memory>

#include "commands.h"
#include "measurement_options.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/validate/calibration_run.h"
#include "output.h"

namespace mlasim::cli {
namespace {

struct CalibrateOptions {
  MeasurementOptions measurements;
  std::string free;
  int holdout_every = 4;
  std::string out;
  std::string format = "text";
  std::string date;
};

std::string today() {
  const std::chrono::year_month_day d{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                     static_cast<unsigned>(d.day()));
}

void run_calibrate(const CalibrateOptions& o) {
  check_format(o.format, {"text", "json"});
  if (o.holdout_every < 0) throw InputError("holdout-every", "must be >= 0, got " + std::to_string(o.holdout_every));
  const Gpu gpu = load_gpu(o.measurements.gpu);
  validate::CalibrationRunOptions options;
  if (!o.free.empty()) options.free = parse_name_list(o.free, "free");
  options.holdout_every = o.holdout_every;
  const validate::CalibrationRun run = validate::run_calibration(gpu, o.measurements.rows_for(gpu), options);
  if (!o.out.empty()) {
    const std::string source =
        validate::fitted_source(run, o.measurements.file_list(), o.date.empty() ? today() : o.date);
    write_file_atomically(
        o.out, validate::fitted_profile_json(read_text_file(o.measurements.profile_path(), "gpu"), run, source));
  }
  write_stdout(o.format == "json" ? validate::calibration_report_json(run).dump(2) + "\n"
                                  : validate::calibration_report_text(run));
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "fit a GPU profile's cost-model parameters to measured times");
  opts->measurements.add_to(*cmd);
  cmd->add_option("--free", opts->free,
                  "parameters to fit, comma list (default t_fix_us,beta_cu_gbps,b_hbm_tbps,matrix_efficiency,"
                  "reduce_block_us)");
  cmd->add_option("--holdout-every", opts->holdout_every, "hold out every n-th row and report its error (0: none)")
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "write the profile with the fitted params (kind fitted, with provenance)");
  cmd->add_option("--date", opts->date, "date written into the provenance (default: today, UTC)");
  cmd->add_option("--format", opts->format, "report as text or json")->capture_default_str();
  cmd->callback([opts] { run_calibrate(*opts); });
}

}  // namespace mlasim::cli
