#include "mlasim/validate/timeline_run.h"

#include <chrono>
#include <filesystem>
#include <system_error>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::validate {

std::string timeline_path(const std::string& dir, const CampaignConfig& config) {
  return (std::filesystem::path(dir) / (config.id + ".json")).string();
}

namespace {

// The folder exists and takes a file: checked before the GPU spends any time.
void check_writable_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError("timeline", dir + ": cannot create the folder (" + (ec ? ec.message() : "not a folder") + ")");
  check_writable((std::filesystem::path(dir) / ".mlasim-write-check").string(), "timeline");
}

}  // namespace

TimelineRunResult record_campaign_timelines(const Campaign& c, const CampaignPlan& plan, KernelMeasurer& measurer,
                                            const TimelineRunOptions& o,
                                            const std::function<void(size_t, size_t)>& progress) {
  if (o.dir.empty()) throw InputError("timeline", "needs the folder to write the timelines to");
  check_writable_dir(o.dir);
  const DeviceInfo device = measurer.device();
  const MeasureOptions options{c.warmup, c.repetitions, c.decode};
  TimelineRunResult result;
  const auto start = std::chrono::steady_clock::now();
  size_t done = 0, todo = 0;
  for (const CampaignConfig& config : plan.configs)
    todo += std::filesystem::exists(timeline_path(o.dir, config)) ? 0 : 1;
  for (const CampaignConfig& config : plan.configs) {
    const std::string path = timeline_path(o.dir, config);
    if (std::filesystem::exists(path)) {
      ++result.already_recorded;
      continue;
    }
    if (o.max_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= o.max_seconds) {
      result.stopped_by_time = true;
      break;
    }
    const sim::WorkloadContext ctx = sim::resolve(config.workload);
    const sim::Evaluation e = sim::evaluate(config.policy, ctx);
    MeasuredTimeline t;
    try {
      t = measurer.record_timeline(*e.plan, ctx.batch, options);
    } catch (const InputError& error) {
      result.unrunnable.push_back(config.id + ": " + error.what());
      continue;
    }
    t.workload = config.workload;
    t.policy = e.source;
    t.config_id = config.id;
    t.device = device.name;
    t.driver = device.driver;
    t.sm_clock_mhz = device.sm_clock_mhz;
    t.commit = o.commit;
    t.date = o.date;
    t.command = o.command;
    write_file_atomically(path, measured_timeline_to_json(t).dump(1) + "\n", "timeline");
    ++result.recorded;
    if (progress) progress(++done, todo);
  }
  return result;
}

}  // namespace mlasim::validate
