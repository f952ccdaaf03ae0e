#include "mlasim/validate/campaign_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::validate {
namespace {

// Appends whole lines with one write each, so a killed process never leaves half a row behind a whole one.
class LineAppender {
 public:
  explicit LineAppender(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd_ < 0) throw InputError("out", path + ": cannot write (" + std::strerror(errno) + ")");
  }
  ~LineAppender() {
    if (fd_ >= 0) ::close(fd_);
  }
  LineAppender(const LineAppender&) = delete;
  LineAppender& operator=(const LineAppender&) = delete;

  void append(const std::string& line) {
    const std::string text = line + "\n";
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n != static_cast<ssize_t>(text.size()))
      throw InputError("out", path_ + ": cannot append a row (" + std::strerror(errno) + ")");
  }

 private:
  std::string path_;
  int fd_ = -1;
};

size_t done_now(const CampaignRunResult& r) {
  return static_cast<size_t>(r.measured) + r.incomplete.size() + r.unrunnable.size();
}

}  // namespace

std::set<std::string> resume_measurement_file(const std::string& path, const std::string& campaign_id) {
  std::set<std::string> ids;
  if (!std::filesystem::exists(path)) return ids;
  std::string text = read_text_file(path, "out");
  // A run killed inside a write can leave a last line without its line break: cut it, it is measured again.
  const size_t end = text.empty() || text.back() == '\n' ? text.size() : text.rfind('\n') + 1;
  if (end != text.size()) {
    std::filesystem::resize_file(path, end);
    text.resize(end);
  }
  if (text.empty()) return ids;
  const std::string header = text.substr(0, text.find('\n'));
  if (header != measurement_csv_header())
    throw InputError("out", path +
                                ": is not a measurement file of this version (its header differs); "
                                "give a new file or remove it");
  for (const MeasurementRow& row : parse_measurement_csv(text, path))
    if (row.campaign == campaign_id) ids.insert(row.config_id);
  return ids;
}

MeasurementRow campaign_row(const Campaign& c, const CampaignConfig& config, const sim::Plan& plan,
                            const KernelTiming& t, const DeviceInfo& device, const CampaignRunOptions& o) {
  const sim::Workload& w = config.workload;
  MeasurementRow r = measurement_row_of(w, config.policy);
  r.kernel = t.kernel;
  r.stage1_us = t.stage1_us;
  r.reduce_us = t.reduce_us;
  r.kernel_us = t.kernel_us;
  const DecodeBatch batch = sim::kernel_batch(plan, w.make_batch());
  r.kv_bytes = static_cast<double>(batch.total_kv_tokens()) * DecodeBatch::kQkHeadDim * dtype_bytes(w.kv_dtype);
  r.kv_tbps = *r.kv_bytes / t.kernel_us * 1e-6;
  r.max_abs_err = t.max_rel_error;
  r.driver = device.driver;
  r.commit = o.commit;
  r.date = o.date;
  r.source = "measured: " + o.command;
  r.campaign = c.id;
  r.config_id = config.id;
  r.device = device.name;
  r.sm_clock_mhz = device.sm_clock_mhz;
  r.mem_clock_mhz = device.mem_clock_mhz;
  return r;
}

CampaignRunResult run_campaign(const Campaign& c, const CampaignPlan& plan, KernelMeasurer& measurer,
                               const CampaignRunOptions& o,
                               const std::function<void(size_t, size_t, double)>& progress) {
  const std::set<std::string> done = resume_measurement_file(o.out, c.id);
  const bool fresh = !std::filesystem::exists(o.out) || std::filesystem::file_size(o.out) == 0;
  LineAppender out(o.out);
  if (fresh) out.append(measurement_csv_header());
  const DeviceInfo device = measurer.device();
  const MeasureOptions options{c.warmup, c.repetitions, c.decode};
  CampaignRunResult result;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  size_t todo = 0;
  for (const CampaignConfig& config : plan.configs) todo += done.count(config.id) ? 0 : 1;
  for (const CampaignConfig& config : plan.configs) {
    if (done.count(config.id)) {
      ++result.already_measured;
      continue;
    }
    if (o.max_seconds > 0 && elapsed() >= o.max_seconds) {
      result.stopped_by_time = true;
      break;
    }
    const sim::WorkloadContext ctx = sim::resolve(config.workload);
    const sim::Evaluation e = sim::evaluate(config.policy, ctx);
    KernelTiming t;
    try {
      t = measurer.measure(*e.plan, ctx.batch, options);
    } catch (const InputError& error) {
      result.unrunnable.push_back(config.id + ": " + error.what());
      if (progress) progress(done_now(result), todo, elapsed());
      continue;
    }
    if (t.output_complete) {
      out.append(measurement_csv_line(campaign_row(c, config, *e.plan, t, device, o)));
      ++result.measured;
    } else {
      result.incomplete.push_back(config.id);
    }
    if (progress) progress(done_now(result), todo, elapsed());
  }
  return result;
}

}  // namespace mlasim::validate
