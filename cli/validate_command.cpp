// mlasim validate: run a measurement campaign on the real kernels (or list it with --dry-run) and write
// measurement rows with provenance, resumably.
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/validate/campaign.h"
#include "mlasim/validate/campaign_run.h"
#include "mlasim/validate/timeline_run.h"
#include "output.h"
#include "progress_bar.h"

namespace mlasim::cli {
namespace {

struct ValidateOptions {
  std::string campaign;
  std::string gpu;  // overrides the campaign's GPU profile
  bool dry_run = false;
  std::string format = "text";
  std::string out;
  std::string stream_out;
  std::string timeline;
  double max_seconds = 0;
  std::string commit;
  std::string date;
  bool quiet = false;
  std::string command_line;
};

void dry_run(const validate::Campaign& c, const validate::CampaignPlan& plan, const std::string& format) {
  nlohmann::json rows = nlohmann::json::array();
  std::string text;
  double total_seconds = 0;
  const sim::Workload* previous = nullptr;
  for (const validate::CampaignConfig& config : plan.configs) {
    const sim::WorkloadContext ctx = sim::resolve(config.workload);
    const double kernel_us = sim::evaluate(config.policy, ctx).prediction->metrics.kernel_us;
    const bool new_inputs = !previous || !(*previous == config.workload);
    previous = &config.workload;
    const double seconds = validate::estimated_device_seconds(c, config, kernel_us, new_inputs);
    total_seconds += seconds;
    if (format == "json") {
      rows.push_back({{"id", config.id},
                      {"workload", sim::workload_to_json(config.workload)},
                      {"policy", config.policy},
                      {"predicted_kernel_us", kernel_us},
                      {"estimated_seconds", seconds}});
    } else {
      text += fmt::format("{}  {:<36} {:<44} {:>10.1f} us\n", config.id, sim::workload_label(config.workload),
                          config.policy, kernel_us);
    }
  }
  if (format == "json") {
    const nlohmann::json j = {{"campaign", c.id},
                              {"configurations", plan.configs.size()},
                              {"left_out_kv_bytes", plan.left_out_kv},
                              {"left_out_unplannable", plan.left_out_unplannable},
                              {"left_out_unrunnable", plan.left_out_unrunnable},
                              {"left_out_reasons", plan.left_out_reasons},
                              {"estimated_device_seconds", total_seconds},
                              {"rows", rows}};
    return write_stdout(j.dump(2) + "\n");
  }
  text += fmt::format("\ncampaign {}: {} configurations on {}, estimated device time {:.0f} s\n", c.id,
                      plan.configs.size(), c.gpu, total_seconds);
  if (plan.left_out_unrunnable)
    text += fmt::format(
        "left out: {} our kernels cannot run as planned (heads per tile other than 16 and 128, or a "
        "grid plan on a cluster subset)\n",
        plan.left_out_unrunnable);
  if (plan.left_out_kv)
    text += fmt::format("left out: {} over max_kv_bytes ({:g} B)\n", plan.left_out_kv, c.max_kv_bytes);
  if (plan.left_out_unplannable) {
    text += fmt::format("left out: {} the policy cannot plan, e.g.\n", plan.left_out_unplannable);
    for (const std::string& reason : plan.left_out_reasons) text += "  " + reason + "\n";
  }
  write_stdout(text);
}

// What the campaign left out before running, so a run that measures few configurations says why (the dry run
// lists the reasons).
std::string left_out_note(const validate::CampaignPlan& plan) {
  const int left_out = plan.left_out_kv + plan.left_out_unplannable + plan.left_out_unrunnable;
  if (left_out == 0) return "";
  return fmt::format(
      "; {} configurations left out ({} over max_kv_bytes, {} the policy cannot plan, {} our kernels "
      "cannot run as planned; --dry-run says why)",
      left_out, plan.left_out_kv, plan.left_out_unplannable, plan.left_out_unrunnable);
}

void write_stream_read(const std::vector<validate::StreamReadPoint>& points, const validate::Campaign& c,
                       const validate::DeviceInfo& device, const validate::CampaignRunOptions& o,
                       const std::string& path) {
  std::string csv = "gpu,kernel,clusters,wg_per_cluster,bytes,kernel_us,tbps,driver,commit,date,source,device\n";
  for (const auto& p : points)
    csv += fmt::format("{},stream_read,{},{},{},{},{},{},{},{},\"measured: {}\",{}\n", c.gpu, p.active_sms, p.wg_per_sm,
                       p.bytes, p.us, p.tbps, device.driver, o.commit, o.date, o.command, device.name);
  write_file_atomically(path, csv);
}

void run_validate(const ValidateOptions& o) {
  check_format(o.format, {"text", "json"});
  validate::Campaign c = validate::load_campaign(o.campaign);
  if (!o.gpu.empty()) {
    load_gpu(o.gpu);  // an unknown profile is the flag's error
    c.gpu = o.gpu;
    for (sim::Workload& w : c.workloads) w.gpu = o.gpu;
  }
  const validate::CampaignPlan plan = validate::expand_campaign(c);
  if (o.dry_run) return dry_run(c, plan, o.format);
  if (o.out.empty() && o.timeline.empty())
    throw InputError("out", "needs the measurement CSV to write (or resume), or --timeline DIR");
  if (o.max_seconds < 0) throw InputError("max-seconds", "must be >= 0, got " + fmt::format("{}", o.max_seconds));
  if (!o.out.empty()) check_writable(o.out);  // resumed when it exists; the run appends to it
  if (!o.stream_out.empty()) check_writable(o.stream_out, "stream-out");
  const std::unique_ptr<validate::KernelMeasurer> measurer = validate::open_kernel_measurer();
  validate::CampaignRunOptions run;
  run.out = o.out;
  run.max_seconds = o.max_seconds;
  run.commit = o.commit.empty() ? MLASIM_SOURCE_COMMIT : o.commit;
  run.date = o.date.empty() ? today() : o.date;
  run.command = o.command_line;
  const validate::DeviceInfo device = measurer->device();
  if (!o.stream_out.empty()) write_stream_read(measurer->stream_read_sweep(), c, device, run, o.stream_out);
  if (!o.quiet)
    std::fprintf(stderr, "%s: %zu configurations of %s on %s\n", o.campaign.c_str(), plan.configs.size(), c.id.c_str(),
                 device.name.c_str());
  if (!o.timeline.empty()) {
    ProgressBar bar(!o.quiet);
    const validate::TimelineRunResult r = validate::record_campaign_timelines(
        c, plan, *measurer, {o.timeline, o.max_seconds, run.commit, run.date, run.command},
        [&bar](size_t done, size_t total) { bar.update(done, total); });
    bar.finish(static_cast<size_t>(r.recorded), plan.configs.size() - static_cast<size_t>(r.already_recorded));
    std::string summary =
        fmt::format("recorded {} timelines, {} already in {}", r.recorded, r.already_recorded, o.timeline);
    if (r.stopped_by_time) summary += fmt::format("; stopped after --max-seconds {} (rerun to go on)", o.max_seconds);
    if (!r.unrunnable.empty())
      summary += fmt::format("; {} the kernels cannot run (e.g. {})", r.unrunnable.size(), r.unrunnable.front());
    write_stdout(summary + left_out_note(plan) + "\n");
    if (o.out.empty()) return;
  }
  ProgressBar bar(!o.quiet);
  const validate::CampaignRunResult r = validate::run_campaign(
      c, plan, *measurer, run, [&bar](size_t done, size_t total, double) { bar.update(done, total); });
  bar.finish(static_cast<size_t>(r.measured) + r.incomplete.size() + r.unrunnable.size(),
             plan.configs.size() - static_cast<size_t>(r.already_measured));
  std::string summary =
      fmt::format("measured {} configurations, {} already in {}", r.measured, r.already_measured, o.out);
  if (r.stopped_by_time) summary += fmt::format("; stopped after --max-seconds {} (rerun to go on)", o.max_seconds);
  if (!r.incomplete.empty())
    summary += fmt::format("; {} left output unwritten (no row; first {})", r.incomplete.size(), r.incomplete.front());
  if (!r.unrunnable.empty())
    summary += fmt::format("; {} the kernels cannot run (no row; e.g. {})", r.unrunnable.size(), r.unrunnable.front());
  write_stdout(summary + left_out_note(plan) + "\n");
}

}  // namespace

void add_validate_command(CLI::App& app, const std::string& command_line) {
  auto opts = std::make_shared<ValidateOptions>();
  opts->command_line = command_line;
  CLI::App* cmd = app.add_subcommand("validate", "run a measurement campaign on the real kernels (--dry-run lists it)");
  cmd->add_option("campaign", opts->campaign, "campaign JSON (data/campaigns/)")->required();
  cmd->add_option("--gpu", opts->gpu, "GPU profile the plans are made for (default: the campaign's)");
  cmd->add_flag("--dry-run", opts->dry_run, "list the configurations, their count and the estimated device time");
  cmd->add_option("--format", opts->format, "dry run: text or json")->capture_default_str();
  cmd->add_option("--out", opts->out, "measurement CSV to write; an existing one is resumed");
  cmd->add_option("--stream-out", opts->stream_out, "also measure the streaming-read sweep into this CSV");
  cmd->add_option("--timeline", opts->timeline,
                  "record each configuration's measured per-CU timeline (instrumented kernels) as DIR/<id>.json, "
                  "Chrome-trace JSON; existing files are kept");
  cmd->add_option("--max-seconds", opts->max_seconds, "stop after this many seconds (0: no limit)");
  cmd->add_option("--commit", opts->commit, "source commit recorded in the rows (default: the build's)");
  cmd->add_option("--date", opts->date, "date recorded in the rows (default: today)");
  cmd->add_flag("--quiet", opts->quiet, "no progress bar");
  cmd->callback([opts] { run_validate(*opts); });
}

}  // namespace mlasim::cli
