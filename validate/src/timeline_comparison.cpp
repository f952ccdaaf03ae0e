#include "mlasim/validate/timeline_comparison.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "mlasim/model/input_error.h"
#include "mlasim/model/kernel_class.h"
#include "mlasim/model/median.h"
#include "mlasim/sim/kernel_choice.h"

namespace mlasim::validate {
namespace {

struct Interval {
  double begin = 0, end = 0;
};

// Busy time of a set of intervals (grid kernels may run two workgroups on one CU at once).
double union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  double total = 0, begin = 0, end = -1;
  for (const Interval& i : v) {
    if (i.begin > end) {
      if (end > begin) total += end - begin;
      begin = i.begin;
      end = i.end;
    } else {
      end = std::max(end, i.end);
    }
  }
  if (end > begin) total += end - begin;
  return total;
}

// Stage-1 facts from per-CU interval lists.
TimelineFacts facts_of(const std::map<int, std::vector<Interval>>& per_cu, double fixed_sum, int works,
                       double reduce_end, int gpu_cus) {
  TimelineFacts f;
  std::vector<double> ends;
  double busy = 0;
  for (const auto& [cu, intervals] : per_cu) {
    CuActivity a;
    a.cu = cu;
    a.works = static_cast<int>(intervals.size());
    a.busy_us = union_length(intervals);
    for (const Interval& i : intervals) a.end_us = std::max(a.end_us, i.end);
    f.stage1_us = std::max(f.stage1_us, a.end_us);
    ends.push_back(a.end_us);
    busy += a.busy_us;
    f.cus.push_back(a);
  }
  f.active_cus = static_cast<int>(f.cus.size());
  f.tail_us = f.stage1_us - median(ends);
  f.mean_fixed_us = works > 0 ? fixed_sum / works : 0.0;
  const int cus = std::max(gpu_cus, f.active_cus);
  f.idle_fraction = f.stage1_us > 0 && cus > 0 ? 1.0 - busy / (f.stage1_us * cus) : 0.0;
  f.reduce_us = reduce_end > f.stage1_us ? reduce_end - f.stage1_us : 0.0;
  return f;
}

int cus_per_cluster(const std::string& class_name) {
  const std::optional<KernelClassId> id = parse_kernel_class(class_name);
  return id ? std::max(kernel_class(*id).cus_per_cluster, 1) : 1;
}

// The place each predicted timeline row ran on. A grid's rows are slots of a CU (rows_per_cu per CU). A persistent
// plan's rows are clusters, and clusters beyond what the GPU holds at once wait for a free place: each row takes,
// in order of its first begin, the place that freed first (greedy interval partitioning), so the per-place
// figures compare with the measured per-CU ones.
std::vector<int> places_of_rows(const sim::Timeline& tl, const std::string& class_name) {
  const int rows = static_cast<int>(tl.rows.size());
  std::vector<int> place(static_cast<size_t>(rows), 0);
  if (tl.rows_per_cu > 1 || class_name == "grid-nonpersistent") {
    for (int r = 0; r < rows; ++r) place[static_cast<size_t>(r)] = r / std::max(tl.rows_per_cu, 1);
    return place;
  }
  std::vector<int> order;
  for (int r = 0; r < rows; ++r)
    if (!tl.rows[static_cast<size_t>(r)].empty()) order.push_back(r);
  std::sort(order.begin(), order.end(), [&tl](int a, int b) {
    return tl.rows[static_cast<size_t>(a)].front().begin_us < tl.rows[static_cast<size_t>(b)].front().begin_us;
  });
  std::vector<double> free_at;  // per place, when its last row ended
  constexpr double kSlackUs = 1e-6;
  for (int r : order) {
    const auto& row = tl.rows[static_cast<size_t>(r)];
    size_t best = free_at.size();
    for (size_t p = 0; p < free_at.size(); ++p)
      if (free_at[p] <= row.front().begin_us + kSlackUs && (best == free_at.size() || free_at[p] < free_at[best]))
        best = p;
    if (best == free_at.size()) free_at.push_back(0);
    free_at[best] = row.back().end_us;
    place[static_cast<size_t>(r)] = static_cast<int>(best);
  }
  return place;
}

}  // namespace

double WorkComparison::duration_error_pct() const {
  const double measured = measured_end_us - measured_begin_us;
  return measured > 0 ? 100.0 * ((predicted_end_us - predicted_begin_us) / measured - 1.0) : 0.0;
}

double WorkComparison::start_error_us() const { return predicted_begin_us - measured_begin_us; }

double TimelineComparison::measured_outside_us() const {
  const double events = measured_instrumented_kernel_us > 0 ? measured_instrumented_kernel_us : measured_kernel_us;
  return events > 0 ? events - (measured.stage1_us + measured.reduce_us) : 0.0;
}

TimelineComparison compare_timelines(const MeasuredTimeline& measured, const sim::Prediction& prediction, int gpu_cus) {
  TimelineComparison c;
  c.gpu_cus = gpu_cus;
  // Measured: one entry per work, its workgroups merged.
  std::map<int, WorkComparison> works;
  std::map<int, std::vector<Interval>> measured_cus;
  double measured_fixed = 0;
  for (const MeasuredWork& w : measured.works) {
    auto [it, fresh] = works.try_emplace(w.work);
    WorkComparison& wc = it->second;
    if (fresh) {
      wc.work = w.work;
      wc.cu = w.cu;
      wc.measured_begin_us = w.begin_us;
      wc.measured_first_kv_us = w.first_kv_us;
      wc.measured_end_us = w.end_us;
    } else {
      if (w.workgroup == 0) wc.cu = w.cu;
      wc.measured_begin_us = std::min(wc.measured_begin_us, w.begin_us);
      wc.measured_first_kv_us = std::min(wc.measured_first_kv_us, w.first_kv_us);
      wc.measured_end_us = std::max(wc.measured_end_us, w.end_us);
    }
    measured_cus[w.cu].push_back({w.begin_us, w.end_us});
  }
  for (const auto& [index, wc] : works) measured_fixed += wc.measured_first_kv_us - wc.measured_begin_us;

  // Predicted: the simulator's boxes, by work, on the places (CUs, or clusters of CUs) they ran on.
  std::map<int, std::vector<Interval>> predicted_places;
  std::vector<const sim::TimelineBox*> box_of;
  double predicted_fixed = 0;
  int predicted_works = 0;
  const sim::Timeline& tl = prediction.timeline;
  const std::vector<int> place = places_of_rows(tl, prediction.metrics.kernel_class);
  for (size_t r = 0; r < tl.rows.size(); ++r)
    for (const sim::TimelineBox& b : tl.rows[r]) {
      if (b.work >= static_cast<int>(box_of.size())) box_of.resize(static_cast<size_t>(b.work) + 1, nullptr);
      box_of[static_cast<size_t>(b.work)] = &b;
      predicted_places[place[r]].push_back({b.begin_us, b.end_us});
      predicted_fixed += b.stream_us - b.begin_us;
      ++predicted_works;
    }
  std::vector<double> duration_errors, start_errors;
  for (auto& [index, wc] : works) {
    if (index >= static_cast<int>(box_of.size()) || box_of[static_cast<size_t>(index)] == nullptr)
      throw InputError("timeline", fmt::format("work {} is not in the predicted plan ({} works): the timeline was "
                                               "measured on another plan",
                                               index, predicted_works));
    const sim::TimelineBox& b = *box_of[static_cast<size_t>(index)];
    wc.predicted_begin_us = b.begin_us;
    wc.predicted_stream_us = b.stream_us;
    wc.predicted_end_us = b.end_us;
    duration_errors.push_back(wc.duration_error_pct());
    start_errors.push_back(wc.start_error_us());
    c.works.push_back(wc);
  }
  c.duration = error_stats(duration_errors);
  const ErrorStats starts = error_stats(start_errors);
  c.start_abs_p50_us = starts.p50_pct;
  c.start_abs_p90_us = starts.p90_pct;

  double measured_reduce_end = 0;
  for (const MeasuredReduceBlock& b : measured.reduce) measured_reduce_end = std::max(measured_reduce_end, b.end_us);
  c.measured = facts_of(measured_cus, measured_fixed, static_cast<int>(works.size()), measured_reduce_end, gpu_cus);
  if (!measured.reduce.empty()) {
    double begin = measured.reduce.front().begin_us;
    for (const MeasuredReduceBlock& b : measured.reduce) begin = std::min(begin, b.begin_us);
    c.measured.reduce_gap_us = std::max(begin - c.measured.stage1_us, 0.0);
  }
  // A place holds a cluster of CUs: its busy time counts once per CU, as the measured side counts each SM of a pair.
  const int per_place = cus_per_cluster(prediction.metrics.kernel_class);
  c.predicted = facts_of(predicted_places, predicted_fixed, predicted_works, tl.end_us(), gpu_cus / per_place);
  c.predicted.active_cus *= per_place;
  c.predicted.stage1_us = tl.stage1_us;
  c.predicted.reduce_us = tl.reduce_us;
  if (!tl.reduce.empty()) {
    double begin = tl.reduce.front().begin_us;
    for (const sim::ReduceBox& b : tl.reduce) begin = std::min(begin, b.begin_us);
    c.predicted.reduce_gap_us = std::max(begin - tl.stage1_us, 0.0);
  } else {
    c.predicted.reduce_gap_us = tl.reduce_us;  // the stage gap before the end: no reduce, all of it gap
  }
  c.measured_kernel_us = measured.kernel_us;
  c.measured_instrumented_kernel_us = measured.instrumented_kernel_us;
  c.predicted_kernel_us = prediction.metrics.kernel_us;
  return c;
}

TimelineCheck check_measured_timeline(const MeasuredTimeline& measured, const std::string& gpu) {
  sim::Workload w = measured.workload;
  if (!gpu.empty()) w.gpu = gpu;
  const sim::WorkloadContext ctx = sim::resolve(w);
  sim::Evaluation e = sim::evaluate(measured.policy, ctx);
  // Cost the class that ran (its name is in the file), not the one `auto` would pick on this profile.
  const KernelClassId cls = sim::kernel_class_of_run(measured.kernel, *e.plan, ctx.batch)
                                .value_or(sim::auto_kernel_class(*e.plan, ctx.batch, ctx.gpu));
  e.prediction = std::make_shared<const sim::Prediction>(sim::simulate(*e.plan, ctx.batch, ctx.gpu, ctx.params, cls));
  const int cus = ctx.clusters > 0 ? ctx.clusters : ctx.gpu.num_cu;
  return {e, compare_timelines(measured, *e.prediction, cus)};
}

namespace {

nlohmann::ordered_json facts_json(const TimelineFacts& f) {
  return {{"stage1_us", f.stage1_us},  {"reduce_us", f.reduce_us},         {"reduce_gap_us", f.reduce_gap_us},
          {"tail_us", f.tail_us},      {"mean_fixed_us", f.mean_fixed_us}, {"idle_fraction", f.idle_fraction},
          {"active_cus", f.active_cus}};
}

}  // namespace

nlohmann::ordered_json timeline_comparison_json(const MeasuredTimeline& m, const TimelineCheck& check,
                                                bool with_works) {
  const TimelineComparison& c = check.comparison;
  nlohmann::ordered_json j = {{"workload", sim::workload_to_json(m.workload)},
                              {"policy", m.policy},
                              {"kernel", m.kernel},
                              {"kernel_class", check.evaluation.prediction->metrics.kernel_class},
                              {"works", c.works.size()},
                              {"duration_error",
                               {{"mape_pct", c.duration.mape_pct},
                                {"p50_pct", c.duration.p50_pct},
                                {"p90_pct", c.duration.p90_pct},
                                {"max_pct", c.duration.max_pct},
                                {"mean_signed_pct", c.duration.mean_signed_pct}}},
                              {"start_error", {{"p50_abs_us", c.start_abs_p50_us}, {"p90_abs_us", c.start_abs_p90_us}}},
                              {"measured", facts_json(c.measured)},
                              {"predicted", facts_json(c.predicted)},
                              {"kernel_us", {{"measured", c.measured_kernel_us}, {"predicted", c.predicted_kernel_us}}},
                              {"measured_outside_us", c.measured_outside_us()},
                              {"instrumentation_overhead_pct", m.overhead_pct()}};
  if (with_works) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const WorkComparison& w : c.works)
      rows.push_back({{"work", w.work},
                      {"cu", w.cu},
                      {"measured_begin_us", w.measured_begin_us},
                      {"measured_first_kv_us", w.measured_first_kv_us},
                      {"measured_end_us", w.measured_end_us},
                      {"predicted_begin_us", w.predicted_begin_us},
                      {"predicted_stream_us", w.predicted_stream_us},
                      {"predicted_end_us", w.predicted_end_us},
                      {"duration_error_pct", w.duration_error_pct()},
                      {"start_error_us", w.start_error_us()}});
    j["per_work"] = rows;
  }
  return j;
}

std::string timeline_comparison_text(const MeasuredTimeline& m, const TimelineCheck& check, bool with_works) {
  const TimelineComparison& c = check.comparison;
  std::string s = fmt::format("measured timeline: {} on {} ({}), policy {}\n", m.kernel,
                              m.device.empty() ? "?" : m.device, m.workload.gpu, m.policy);
  if (m.overhead_pct() != 0)
    s += fmt::format("instrumentation: kernel {:.2f} us plain, {:.2f} us instrumented ({:+.2f} %)\n", m.kernel_us,
                     m.instrumented_kernel_us, m.overhead_pct());
  if (with_works) {
    s += fmt::format("{:>6} {:>4} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9}\n", "work", "cu", "meas_beg", "meas_end",
                     "pred_beg", "pred_end", "dur_err%", "start_us");
    for (const WorkComparison& w : c.works)
      s += fmt::format("{:>6} {:>4} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>+8.1f} {:>+9.2f}\n", w.work, w.cu,
                       w.measured_begin_us, w.measured_end_us, w.predicted_begin_us, w.predicted_end_us,
                       w.duration_error_pct(), w.start_error_us());
  }
  s += fmt::format(
      "per-work duration error over {} works: MAPE {:.1f} %, p50 {:.1f} %, p90 {:.1f} %, max {:.1f} %, mean "
      "signed {:+.1f} %\n",
      c.works.size(), c.duration.mape_pct, c.duration.p50_pct, c.duration.p90_pct, c.duration.max_pct,
      c.duration.mean_signed_pct);
  s += fmt::format("per-work start error: |predicted - measured| p50 {:.2f} us, p90 {:.2f} us\n", c.start_abs_p50_us,
                   c.start_abs_p90_us);
  s += fmt::format("{:<28} {:>10} {:>10}\n", "", "measured", "predicted");
  const auto row = [&s](const char* name, double a, double b, const char* unit) {
    s += fmt::format("{:<28} {:>10.2f} {:>10.2f} {}\n", name, a, b, unit);
  };
  row("stage 1", c.measured.stage1_us, c.predicted.stage1_us, "us");
  row("stage-1 tail", c.measured.tail_us, c.predicted.tail_us, "us (last end - median CU end)");
  row("after stage 1 (reduce)", c.measured.reduce_us, c.predicted.reduce_us, "us (to the last reduce end)");
  if (c.measured.reduce_us > 0 || c.predicted_reduce_span_us() > 0) {
    row("  gap before the reduce", c.measured.reduce_gap_us, c.predicted.reduce_gap_us,
        "us (stage-1 end to the first reduce start)");
    row("  the reduce itself", c.measured_reduce_span_us(), c.predicted_reduce_span_us(),
        "us (first reduce start to last end)");
  }
  row("mean fixed part of a work", c.measured.mean_fixed_us, c.predicted.mean_fixed_us, "us");
  row("idle share of CUs", 100.0 * c.measured.idle_fraction, 100.0 * c.predicted.idle_fraction, "% of stage 1");
  s += fmt::format("{:<28} {:>10} {:>10}\n", "CUs with work", c.measured.active_cus, c.predicted.active_cus);
  if (c.measured_kernel_us > 0) {
    row("kernel time", c.measured_kernel_us, c.predicted_kernel_us, "us (measured: event-timed, plain)");
    s += fmt::format("{:<28} {:>10.2f} {:>10} {}\n", "  outside the timeline", c.measured_outside_us(), "",
                     "us (the instrumented launches' median event time less the recorded launch's span: launch "
                     "and drain, which no workgroup records; below 0 where the recorded launch ran slower)");
  }
  return s;
}

}  // namespace mlasim::validate
