#include "mlasim/validate/timeline_summary.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/median.h"
#include "mlasim/sim/workload.h"
#include "mlasim/validate/gzip_file.h"

namespace mlasim::validate {
namespace {

bool is_timeline_name(const std::string& name) { return name.ends_with(".json") || name.ends_with(".json.gz"); }

double percent(double predicted, double measured) { return measured > 0 ? 100.0 * (predicted / measured - 1.0) : 0.0; }

// The pooled figures: every work's duration error, each timeline's kernel-time error, and the median difference
// (predicted - measured, us) of each part, so a constant offset shows as what it is.
struct Pooled {
  ErrorStats work_duration, kernel;
  // The clock of every workgroup that counted its SM's cycles, over the timelines that counted them.
  size_t clocked_workgroups = 0;
  int clocked_timelines = 0;
  double sm_mhz_median = 0, sm_mhz_p10 = 0, sm_mhz_p90 = 0;
  double work_us = 0, stage1_us = 0, gap_us = 0, reduce_us = 0, outside_us = 0;
  int works = 0, with_reduce = 0;
  // What a second kernel (the reduce) adds to the event time besides its own work, measured: the gap before it plus
  // what the events hold outside the timeline with a reduce, less what they hold without one (medians; 0 where the
  // timelines lack either kind).
  double outside_one_kernel_us = 0, outside_with_reduce_us = 0, measured_gap_us = 0, second_kernel_us = 0;
  int one_kernel_launches = 0, reduce_launches = 0;
  bool second_kernel_measured() const { return one_kernel_launches > 0 && reduce_launches > 0; }
};

Pooled pool(const std::vector<TimelineSummaryRow>& rows) {
  Pooled p;
  std::vector<double> work_errors, kernel_errors, work_diffs, stage1_diffs, gap_diffs, reduce_diffs, outside, sm_mhz;
  std::vector<double> outside_one, outside_two, measured_gaps;
  for (const TimelineSummaryRow& r : rows) {
    const TimelineComparison& c = r.comparison;
    for (const WorkComparison& w : c.works) {
      work_errors.push_back(w.duration_error_pct());
      work_diffs.push_back((w.predicted_end_us - w.predicted_begin_us) - (w.measured_end_us - w.measured_begin_us));
    }
    if (c.measured_kernel_us > 0) {
      kernel_errors.push_back(percent(c.predicted_kernel_us, c.measured_kernel_us));
      outside.push_back(c.measured_outside_us());
      if (c.measured.reduce_us > 0) {
        outside_two.push_back(c.measured_outside_us());
        measured_gaps.push_back(c.measured.reduce_gap_us);
      } else {
        outside_one.push_back(c.measured_outside_us());
      }
    }
    stage1_diffs.push_back(c.predicted.stage1_us - c.measured.stage1_us);
    sm_mhz.insert(sm_mhz.end(), r.measured_sm_mhz.begin(), r.measured_sm_mhz.end());
    p.clocked_timelines += r.measured_sm_mhz.empty() ? 0 : 1;
    if (c.measured.reduce_us > 0 && c.predicted_reduce_span_us() > 0) {
      gap_diffs.push_back(c.predicted.reduce_gap_us - c.measured.reduce_gap_us);
      reduce_diffs.push_back(c.predicted_reduce_span_us() - c.measured_reduce_span_us());
    }
  }
  p.work_duration = error_stats(work_errors);
  p.kernel = error_stats(kernel_errors);
  p.works = static_cast<int>(work_errors.size());
  p.with_reduce = static_cast<int>(reduce_diffs.size());
  p.work_us = median(work_diffs);
  p.stage1_us = median(stage1_diffs);
  p.gap_us = median(gap_diffs);
  p.reduce_us = median(reduce_diffs);
  p.outside_us = median(outside);
  p.one_kernel_launches = static_cast<int>(outside_one.size());
  p.reduce_launches = static_cast<int>(outside_two.size());
  if (p.second_kernel_measured()) {
    p.outside_one_kernel_us = median(outside_one);
    p.outside_with_reduce_us = median(outside_two);
    p.measured_gap_us = median(measured_gaps);
    p.second_kernel_us = p.measured_gap_us + p.outside_with_reduce_us - p.outside_one_kernel_us;
  }
  p.clocked_workgroups = sm_mhz.size();
  p.sm_mhz_median = median(sm_mhz);
  p.sm_mhz_p10 = percentile(sm_mhz, 0.1);
  p.sm_mhz_p90 = percentile(sm_mhz, 0.9);
  return p;
}

nlohmann::ordered_json summary_stats_json(const ErrorStats& s) {
  return {{"count", s.rows},      {"mape_pct", s.mape_pct}, {"p50_pct", s.p50_pct},
          {"p90_pct", s.p90_pct}, {"max_pct", s.max_pct},   {"mean_signed_pct", s.mean_signed_pct}};
}

}  // namespace

std::vector<TimelineFile> load_timeline_files(const std::vector<std::string>& paths,
                                              std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::vector<TimelineFile> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> named;
      fs::directory_iterator it(path, ec);
      if (ec) throw InputError("timeline", path + ": cannot list (" + ec.message() + ")");
      for (const fs::directory_entry& e : it)
        if (e.is_regular_file(ec) && is_timeline_name(e.path().filename().string())) named.push_back(e.path().string());
      std::sort(named.begin(), named.end());
      const size_t before = files.size();
      for (const std::string& f : named) {
        const nlohmann::json j = read_json_maybe_gzip(f, "timeline");
        if (is_measured_timeline(j))  // parsed once: the check that tells timelines apart reads the same JSON
          files.push_back({f, parse_file_json(j, f, "timeline", measured_timeline_from_json)});
        else if (skipped)
          skipped->push_back(f);
      }
      if (files.size() == before)
        throw InputError("timeline",
                         path + ": holds no measured timeline (*.json, *.json.gz; not searched recursively)");
    } else if (fs::exists(path, ec)) {
      files.push_back({path, load_measured_timeline(path)});
    } else {
      throw InputError("timeline", path + ": does not exist");
    }
  }
  return files;
}

TimelineSummaryRow summarize_timeline(const TimelineFile& file, const std::string& gpu) {
  const MeasuredTimeline& t = file.timeline;
  TimelineCheck check = [&] {
    try {
      return check_measured_timeline(t, gpu);
    } catch (const InputError& e) {  // name the file among many
      throw InputError("timeline", file.path + ": " + e.what());
    }
  }();
  TimelineSummaryRow r;
  r.file = std::filesystem::path(file.path).filename().string();
  r.workload = sim::workload_label(t.workload);
  r.policy = t.policy;
  r.kernel_class = check.evaluation.prediction->metrics.kernel_class;
  r.comparison = std::move(check.comparison);
  std::vector<double> measured, predicted;
  for (const WorkComparison& w : r.comparison.works) {
    measured.push_back(w.measured_end_us - w.measured_begin_us);
    predicted.push_back(w.predicted_end_us - w.predicted_begin_us);
  }
  r.measured_work_us = median(measured);
  r.predicted_work_us = median(predicted);
  for (const MeasuredWork& w : t.works)
    if (w.sm_cycles > 0 && w.end_us > w.begin_us)
      r.measured_sm_mhz.push_back(double(w.sm_cycles) / (w.end_us - w.begin_us));
  return r;
}

std::string timeline_summary_text(const std::vector<TimelineSummaryRow>& rows) {
  std::string s = fmt::format("{:<30} {:<24} {:>5} | {:>15} {:>6} | {:>15} | {:>11} | {:>13} | {:>15} {:>6} | {:>7}\n",
                              "workload", "policy", "works", "work m / p", "err %", "stage 1 m / p", "gap m / p",
                              "reduce m / p", "kernel m / p", "err %", "outside");
  for (const TimelineSummaryRow& r : rows) {
    const TimelineComparison& c = r.comparison;
    const bool reduce = c.measured.reduce_us > 0 || c.predicted_reduce_span_us() > 0;  // else a stage gap alone
    s += fmt::format("{:<30} {:<24} {:>5} | {:>7.2f} {:>7.2f} {:>+6.1f} | {:>7.2f} {:>7.2f} | ", r.workload, r.policy,
                     c.works.size(), r.measured_work_us, r.predicted_work_us,
                     percent(r.predicted_work_us, r.measured_work_us), c.measured.stage1_us, c.predicted.stage1_us);
    s += reduce ? fmt::format("{:>5.2f} {:>5.2f} | {:>6.2f} {:>6.2f} | ", c.measured.reduce_gap_us,
                              c.predicted.reduce_gap_us, c.measured_reduce_span_us(), c.predicted_reduce_span_us())
                : fmt::format("{:>11} | {:>13} | ", "-", "-");
    s += c.measured_kernel_us > 0
             ? fmt::format("{:>7.2f} {:>7.2f} {:>+6.1f} | {:>7.2f}\n", c.measured_kernel_us, c.predicted_kernel_us,
                           percent(c.predicted_kernel_us, c.measured_kernel_us), c.measured_outside_us())
             : fmt::format("{:>15} {:>6} | {:>7}\n", "-", "", "-");
  }
  const Pooled p = pool(rows);
  s += fmt::format("\n{} timelines, {} works\n", rows.size(), p.works);
  s += fmt::format("per-work duration error: MAPE {:.1f} %, p90 {:.1f} %, mean signed {:+.1f} %\n",
                   p.work_duration.mape_pct, p.work_duration.p90_pct, p.work_duration.mean_signed_pct);
  if (p.kernel.rows > 0)
    s += fmt::format("kernel time error ({} timelines): MAPE {:.1f} %, p90 {:.1f} %, mean signed {:+.1f} %\n",
                     p.kernel.rows, p.kernel.mape_pct, p.kernel.p90_pct, p.kernel.mean_signed_pct);
  s += fmt::format("median predicted - measured: a work {:+.2f} us, stage 1 {:+.2f} us", p.work_us, p.stage1_us);
  if (p.with_reduce > 0)
    s += fmt::format(", over the {} with a reduce: the gap before it {:+.2f} us, the reduce {:+.2f} us", p.with_reduce,
                     p.gap_us, p.reduce_us);
  s += "\n";
  if (p.kernel.rows > 0)
    s += fmt::format(
        "median event time outside the timeline: {:.2f} us (the instrumented launches' median event "
        "time less the recorded launch's span: launch and drain)\n",
        p.outside_us);
  if (p.second_kernel_measured())
    s += fmt::format(
        "a second kernel (the reduce) adds {:.2f} us besides its work (a profile's second_kernel_us): the gap "
        "before it, median {:.2f} us, plus the time outside the timeline with a reduce, median {:.2f} us over {} "
        "launches, less without one, {:.2f} us over {}\n",
        p.second_kernel_us, p.measured_gap_us, p.outside_with_reduce_us, p.reduce_launches, p.outside_one_kernel_us,
        p.one_kernel_launches);
  if (p.clocked_workgroups > 0)
    s += fmt::format(
        "SM clock over the works ({} timelines counted their SMs' cycles): median {:.0f} MHz, p10 {:.0f}, "
        "p90 {:.0f}\n",
        p.clocked_timelines, p.sm_mhz_median, p.sm_mhz_p10, p.sm_mhz_p90);
  return s;
}

nlohmann::ordered_json timeline_summary_json(const std::vector<TimelineSummaryRow>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const TimelineSummaryRow& r : rows) {
    const TimelineComparison& c = r.comparison;
    const auto part = [](double measured, double predicted) {
      return nlohmann::ordered_json{{"measured", measured}, {"predicted", predicted}};
    };
    list.push_back(
        {{"file", r.file},
         {"workload", r.workload},
         {"policy", r.policy},
         {"kernel_class", r.kernel_class},
         {"works", c.works.size()},
         {"work_us", part(r.measured_work_us, r.predicted_work_us)},
         {"stage1_us", part(c.measured.stage1_us, c.predicted.stage1_us)},
         {"reduce_gap_us", part(c.measured.reduce_gap_us, c.predicted.reduce_gap_us)},
         {"reduce_span_us", part(c.measured_reduce_span_us(), c.predicted_reduce_span_us())},
         {"kernel_us", part(c.measured_kernel_us, c.predicted_kernel_us)},
         {"measured_outside_us", c.measured_outside_us()},
         {"work_duration_error", summary_stats_json(c.duration)},
         {"measured_sm_mhz", r.measured_sm_mhz.empty() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(median(r.measured_sm_mhz))}});
  }
  const Pooled p = pool(rows);
  return {{"timelines", list},
          {"pooled",
           {{"works", p.works},
            {"work_duration_error", summary_stats_json(p.work_duration)},
            {"kernel_error", summary_stats_json(p.kernel)},
            {"median_difference_us",
             {{"work", p.work_us},
              {"stage1", p.stage1_us},
              {"reduce_gap", p.gap_us},
              {"reduce", p.reduce_us},
              {"timelines_with_reduce", p.with_reduce}}},
            {"median_measured_outside_us", p.outside_us},
            {"second_kernel_us", p.second_kernel_measured()
                                     ? nlohmann::ordered_json{{"us", p.second_kernel_us},
                                                              {"measured_gap_us", p.measured_gap_us},
                                                              {"outside_with_reduce_us", p.outside_with_reduce_us},
                                                              {"reduce_launches", p.reduce_launches},
                                                              {"outside_one_kernel_us", p.outside_one_kernel_us},
                                                              {"one_kernel_launches", p.one_kernel_launches}}
                                     : nlohmann::ordered_json(nullptr)},
            {"sm_clock_mhz", p.clocked_workgroups == 0 ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json{{"workgroups", p.clocked_workgroups},
                                                                                {"timelines", p.clocked_timelines},
                                                                                {"median", p.sm_mhz_median},
                                                                                {"p10", p.sm_mhz_p10},
                                                                                {"p90", p.sm_mhz_p90}}}}}};
}

}  // namespace mlasim::validate
