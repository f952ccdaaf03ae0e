// mlasim calibrate: fit a GPU profile's cost-model parameters to measured times and write the fitted profile.
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "commands.h"
#include "measurement_options.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/validate/bandwidth_curve.h"
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
  std::string stream_read;         // fit the memory curve to this sweep first
  std::string kernel_params_from;  // start from this profile's kernel parameters (transfer across GPUs)
};

std::string fmt_sigma(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : "n/a"; }

void run_calibrate(const CalibrateOptions& o) {
  check_format(o.format, {"text", "json"});
  if (o.holdout_every < 0) throw InputError("holdout-every", "must be >= 0, got " + std::to_string(o.holdout_every));
  if (o.measurements.files.empty() && o.stream_read.empty() && o.kernel_params_from.empty())
    throw InputError("measurements", "give --measurements FILE, --stream-read FILE or --kernel-params-from PROFILE");
  const std::string date = o.date.empty() ? today() : o.date;
  if (!o.out.empty()) check_writable(o.out);  // before the fit, not after it
  Gpu gpu = load_gpu(o.measurements.gpu);
  std::string profile = read_text_file(o.measurements.profile_path(), "gpu");
  std::map<std::string, GpuParam> set;  // parameters taken from elsewhere before any fit
  std::string preface;
  if (!o.kernel_params_from.empty()) {
    const Gpu from = load_gpu(o.kernel_params_from);
    for (const auto& [key, p] : from.params)
      if (is_kernel_param_key(key))  // the memory curve and the datasheet stay the target GPU's own
        set[key] = GpuParam{p.value, "transferred",
                            fmt::format("from the {} profile ({}): {}", from.name, p.kind, p.source), p.std_error};
    preface += fmt::format("kernel parameters: {} taken from {}\n", set.size(), from.name);
  }
  if (!o.stream_read.empty()) {
    const validate::BandwidthCurveFit c = validate::fit_bandwidth_curve(validate::read_stream_read_csv(o.stream_read));
    const std::string source =
        fmt::format("mlasim calibrate --stream-read {}, {}: curve fit to {} points, MAPE {:.1f}%, max {:.1f}%",
                    o.stream_read, date, c.points, c.mape_pct, c.max_abs_error_pct);
    set["b_hbm_tbps"] = GpuParam{c.b_max_tbps, "measured", source + "; 1 sigma " + fmt_sigma(c.b_max_std), c.b_max_std};
    set["bw_knee"] = GpuParam{c.knee, "measured", source + "; 1 sigma " + fmt_sigma(c.knee_std), c.knee_std};
    preface += fmt::format("memory curve: B {:.3f} TB/s, knee {:.2f} ({} points, MAPE {:.1f}%, max {:.1f}%)\n",
                           c.b_max_tbps, c.knee, c.points, c.mape_pct, c.max_abs_error_pct);
  }
  for (const auto& [key, p] : set) gpu.params[key] = p;
  profile = validate::profile_json_with_params(profile, set);
  if (o.measurements.files.empty()) {  // nothing to fit beyond what was set
    if (!o.out.empty()) write_file_atomically(o.out, profile);
    write_stdout(preface);
    return;
  }
  validate::CalibrationRunOptions options;
  if (!o.free.empty()) options.free = parse_name_list(o.free, "free");
  options.holdout_every = o.holdout_every;
  const validate::CalibrationRun run = validate::run_calibration(gpu, o.measurements.rows_for(gpu), options);
  if (!o.out.empty()) {
    const std::string source = validate::fitted_source(run, o.measurements.file_list(), date);
    write_file_atomically(o.out, validate::fitted_profile_json(profile, run, source));
  }
  write_stdout(o.format == "json" ? validate::calibration_report_json(run).dump(2) + "\n"
                                  : preface + validate::calibration_report_text(run));
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "fit a GPU profile's cost-model parameters to measured times");
  opts->measurements.files_required = false;
  opts->measurements.add_to(*cmd);
  cmd->add_option("--stream-read", opts->stream_read,
                  "fit the memory curve (b_hbm_tbps, bw_knee) to this streaming-read sweep (validate --stream-out) "
                  "before the kernel fit");
  cmd->add_option("--kernel-params-from", opts->kernel_params_from,
                  "start from this profile's kernel parameters (per-class, fixed costs, reduce), keeping the target "
                  "GPU's datasheet and memory curve: transfer across GPUs of one architecture");
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
