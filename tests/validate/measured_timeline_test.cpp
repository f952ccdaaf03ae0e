// Measured timelines: the Chrome-trace file (what Perfetto and chrome://tracing need, and what mlasim reads back),
// its reader's errors, and the work-by-work comparison with the prediction.
#include "mlasim/validate/measured_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/validate/timeline_comparison.h"
#include "support/input_error_of.h"
#include "timeline_from_prediction.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;
using nlohmann::json;

sim::Workload ragged_workload() {
  sim::Workload w;
  w.gpu = "h100";
  w.batch = sim::BatchSpec::list({9000, 300, 4096, 17000, 120, 2048, 6000, 800});
  w.heads = 16;
  w.q_dtype = DType::bf16;
  w.kv_dtype = DType::bf16;
  w.page_size = 64;
  return w;
}

struct Fixture {
  sim::Workload workload = ragged_workload();
  sim::WorkloadContext ctx = sim::resolve(workload);
  sim::Evaluation e = sim::evaluate("aiter-v1", ctx);
  MeasuredTimeline timeline() const {
    MeasuredTimeline t = testing::timeline_from_prediction(*e.plan, *e.prediction);
    t.workload = workload;
    t.policy = e.source;
    t.device = "test";
    return t;
  }
};

std::string error_field(const json& j) {
  const auto e = input_error_of([&] { measured_timeline_from_json(j); });
  return e ? e->field() : "";
}

TEST(MeasuredTimeline, IsAChromeTraceOfCompleteEventsOneTrackPerCu) {
  const Fixture f;
  const MeasuredTimeline t = f.timeline();
  const json j = json::parse(measured_timeline_to_json(t).dump());
  ASSERT_TRUE(j.at("traceEvents").is_array());
  std::set<int> pids, named_pids;
  int works = 0, fixed = 0, reduce = 0;
  for (const json& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      if (e.at("name") == "process_name") named_pids.insert(e.at("pid").get<int>());
      continue;
    }
    ASSERT_EQ(ph, "X");  // complete events only
    EXPECT_TRUE(e.at("ts").is_number());
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    EXPECT_TRUE(e.at("tid").is_number_integer());
    pids.insert(e.at("pid").get<int>());
    if (e.at("cat") == "work") {
      ++works;
      for (const char* key : {"work", "request", "kv_start", "kv_end", "partial"})
        EXPECT_TRUE(e.at("args").contains(key));
    }
    fixed += e.at("cat") == "fixed";
    reduce += e.at("cat") == "reduce";
  }
  EXPECT_EQ(works, static_cast<int>(t.works.size()));
  EXPECT_GT(fixed, 0);
  EXPECT_EQ(reduce, static_cast<int>(t.reduce.size()));
  EXPECT_GT(reduce, 0);  // the ragged batch splits, so a reduce runs
  EXPECT_EQ(pids, (std::set<int>{1, 2}));
  EXPECT_EQ(named_pids, (std::set<int>{1, 2}));
  EXPECT_TRUE(is_measured_timeline(j));
}

// Perfetto's JSON importer reads traceEvents, systemTraceEvents, metadata, displayTimeUnit ("ms" or "ns" only) and
// otherData, and stops at the first top-level key it does not know: mlasim's own facts must sit under otherData.
TEST(MeasuredTimeline, TopLevelKeysAreOnlyThoseTraceViewersRead) {
  const Fixture f;
  const json j = json::parse(measured_timeline_to_json(f.timeline()).dump());
  for (const auto& [key, value] : j.items())
    EXPECT_TRUE(key == "traceEvents" || key == "displayTimeUnit" || key == "otherData") << key;
  EXPECT_TRUE(j.at("displayTimeUnit") == "ns" || j.at("displayTimeUnit") == "ms");
  EXPECT_TRUE(j.at("otherData").at("mlasim").is_object());
  for (const json& e : j.at("traceEvents")) {  // only metadata events may leave ts out
    if (e.at("ph") == "M") continue;
    EXPECT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("pid") && e.contains("tid"));
  }
}

TEST(MeasuredTimeline, ReadsBackWhatItWrote) {
  const Fixture f;
  const MeasuredTimeline t = f.timeline();
  const MeasuredTimeline back = measured_timeline_from_json(json::parse(measured_timeline_to_json(t).dump()));
  EXPECT_EQ(back.workload, t.workload);
  EXPECT_EQ(back.policy, t.policy);
  EXPECT_EQ(back.kernel, t.kernel);
  EXPECT_DOUBLE_EQ(back.kernel_us, t.kernel_us);
  ASSERT_EQ(back.works.size(), t.works.size());
  ASSERT_EQ(back.reduce.size(), t.reduce.size());
  std::map<int, const MeasuredWork*> by_work;
  for (const MeasuredWork& w : back.works) by_work[w.work] = &w;
  for (const MeasuredWork& w : t.works) {
    const MeasuredWork& b = *by_work.at(w.work);
    EXPECT_EQ(b.cu, w.cu);
    EXPECT_NEAR(b.begin_us, w.begin_us, 1e-3);
    EXPECT_NEAR(b.first_kv_us, w.first_kv_us, 2e-3);
    EXPECT_NEAR(b.end_us, w.end_us, 2e-3);
    EXPECT_EQ(b.request, w.request);
    EXPECT_EQ(b.kv_start, w.kv_start);
    EXPECT_EQ(b.kv_end, w.kv_end);
    EXPECT_EQ(b.partial, w.partial);
  }
}

TEST(MeasuredTimeline, BadFilesNameTheField) {
  const Fixture f;
  const json good = json::parse(measured_timeline_to_json(f.timeline()).dump());
  size_t first_work = 0;
  while (good["traceEvents"][first_work].value("cat", "") != "work") ++first_work;
  const std::string ev = "traceEvents[" + std::to_string(first_work) + "]";

  json j = good;
  j["otherData"].erase("mlasim");
  EXPECT_EQ(error_field(j), "otherData.mlasim");
  j = good;
  j["traceEvents"][first_work]["dur"] = -1.0;
  EXPECT_EQ(error_field(j), ev + ".dur");
  j = good;
  j["traceEvents"][first_work].erase("ts");
  EXPECT_EQ(error_field(j), ev + ".ts");
  j = good;
  j["traceEvents"][first_work]["args"]["first_kv_ts"] = 1e8;
  EXPECT_EQ(error_field(j), ev + ".args.first_kv_ts");
  j = good;
  j["traceEvents"][first_work]["pid"] = 2;
  EXPECT_EQ(error_field(j), ev + ".pid");
  j = good;
  j["otherData"]["mlasim"]["format"] = "something-else";
  EXPECT_EQ(error_field(j), "otherData.mlasim.format");
  j = good;
  j["otherData"]["mlasim"]["workload"]["heads"] = 0;
  EXPECT_EQ(error_field(j), "otherData.mlasim.workload.heads");
  j = good;
  j["surprise"] = 1;
  EXPECT_EQ(error_field(j), "surprise");
  j = good;
  j["traceEvents"] = json::array();
  EXPECT_EQ(error_field(j), "traceEvents");
}

TEST(MeasuredTimeline, AStampAtTheEventsEndReadsDespiteRounding) {
  // As an H200 timeline has it: ts + dur is 271.96799999999996, a rounding step below the stamp 271.968.
  const Fixture f;
  json j = json::parse(measured_timeline_to_json(f.timeline()).dump());
  size_t w = 0;
  while (j["traceEvents"][w].value("cat", "") != "work") ++w;
  j["traceEvents"][w]["ts"] = 139.552;
  j["traceEvents"][w]["dur"] = 132.416;
  j["traceEvents"][w]["args"]["first_kv_ts"] = 271.968;
  const MeasuredTimeline t = measured_timeline_from_json(j);
  const auto it =
      std::find_if(t.works.begin(), t.works.end(), [](const MeasuredWork& m) { return m.begin_us == 139.552; });
  ASSERT_NE(it, t.works.end());
  EXPECT_EQ(it->first_kv_us, it->end_us);                // the edge, not past it
  j["traceEvents"][w]["args"]["first_kv_ts"] = 271.970;  // 2 ns past the end: a broken stamp
  EXPECT_EQ(error_field(j), "traceEvents[" + std::to_string(w) + "].args.first_kv_ts");
}

TEST(MeasuredTimeline, TheSmClockCyclesReadBackAndMayBeAbsent) {
  const Fixture f;
  MeasuredTimeline t = f.timeline();
  ASSERT_FALSE(t.works.empty());
  ASSERT_FALSE(t.reduce.empty());
  for (size_t i = 0; i < t.works.size(); ++i) t.works[i].sm_cycles = 100000 + i;
  t.reduce.front().sm_cycles = 4294967295u;  // the largest a 32-bit counter's difference can be
  const json j = json::parse(measured_timeline_to_json(t).dump());
  const MeasuredTimeline back = measured_timeline_from_json(j);
  std::map<int, uint64_t> cycles;
  for (const MeasuredWork& w : back.works) cycles[w.work] = w.sm_cycles;
  for (const MeasuredWork& w : t.works) EXPECT_EQ(cycles.at(w.work), w.sm_cycles);
  EXPECT_EQ(back.reduce.front().sm_cycles, 4294967295u);

  // A timeline recorded before the kernels counted cycles has none: 0, not an error.
  const MeasuredTimeline older =
      measured_timeline_from_json(json::parse(measured_timeline_to_json(f.timeline()).dump()));
  for (const MeasuredWork& w : older.works) EXPECT_EQ(w.sm_cycles, 0u);

  json bad = j;
  size_t w = 0;
  while (bad["traceEvents"][w].value("cat", "") != "work") ++w;
  bad["traceEvents"][w]["args"]["sm_cycles"] = -5;
  EXPECT_EQ(error_field(bad), "traceEvents[" + std::to_string(w) + "].args.sm_cycles");
}

TEST(TimelineComparison, AgreesExactlyWithThePredictionItWasMadeFrom) {
  const Fixture f;
  const TimelineComparison c = compare_timelines(f.timeline(), *f.e.prediction, f.ctx.gpu.num_cu);
  EXPECT_EQ(c.works.size(), f.e.plan->works.size());
  EXPECT_NEAR(c.duration.mape_pct, 0.0, 1e-9);
  EXPECT_NEAR(c.start_abs_p90_us, 0.0, 1e-9);
  EXPECT_NEAR(c.measured.stage1_us, c.predicted.stage1_us, 1e-9);
  EXPECT_NEAR(c.measured.tail_us, c.predicted.tail_us, 1e-9);
  EXPECT_NEAR(c.measured.mean_fixed_us, c.predicted.mean_fixed_us, 1e-9);
  EXPECT_EQ(c.measured.active_cus, c.predicted.active_cus);
  EXPECT_GT(c.measured.tail_us, 0.0);  // a ragged batch under aiter-v1 does not end evenly
  // Its long requests split: the reduce's gap and its own span, part by part, and nothing outside the timeline.
  ASSERT_FALSE(f.e.prediction->timeline.reduce.empty());
  EXPECT_NEAR(c.measured.reduce_gap_us, c.predicted.reduce_gap_us, 1e-9);
  EXPECT_NEAR(c.predicted.reduce_gap_us, f.ctx.params.stage_gap_us + f.ctx.params.second_kernel_us, 1e-9);
  EXPECT_NEAR(c.measured_reduce_span_us(), c.predicted_reduce_span_us(), 1e-9);
  EXPECT_GT(c.measured_reduce_span_us(), 0.0);
  EXPECT_NEAR(c.measured_kernel_us, c.predicted_kernel_us, 1e-9);
  // The instrumented launches' event time against the recorded span (the plain kernel's, as made here).
  EXPECT_NEAR(c.measured_outside_us(), c.measured_instrumented_kernel_us - c.measured_kernel_us, 1e-9);
  EXPECT_GT(c.measured_outside_us(), 0.0);
}

TEST(TimelineComparison, MeasuresEachWorksDurationAndStartError) {
  const Fixture f;
  MeasuredTimeline t = f.timeline();
  for (MeasuredWork& w : t.works) {  // every work 25 % longer and 1 us later than predicted
    const double d = w.end_us - w.begin_us;
    w.begin_us += 1.0;
    w.first_kv_us += 1.0;
    w.end_us = w.begin_us + 1.25 * d;
  }
  const TimelineComparison c = compare_timelines(t, *f.e.prediction, f.ctx.gpu.num_cu);
  for (const WorkComparison& w : c.works) {
    if (w.measured_end_us - w.measured_begin_us <= 0) continue;
    EXPECT_NEAR(w.duration_error_pct(), -20.0, 1e-6);
    EXPECT_NEAR(w.start_error_us(), -1.0, 1e-9);
  }
  EXPECT_NEAR(c.duration.mean_signed_pct, -20.0, 1e-6);
  EXPECT_NEAR(c.start_abs_p50_us, 1.0, 1e-9);
}

TEST(TimelineComparison, CheckReplansTheWorkloadWithItsPolicy) {
  const Fixture f;
  const TimelineCheck check = check_measured_timeline(f.timeline());
  EXPECT_EQ(check.evaluation.plan->works, f.e.plan->works);
  EXPECT_EQ(check.evaluation.prediction->metrics.kernel_class, "wgmma-bf16");
  EXPECT_NEAR(check.comparison.duration.mape_pct, 0.0, 1e-9);
  const json j = json::parse(timeline_comparison_json(f.timeline(), check, true).dump());
  EXPECT_EQ(j.at("per_work").size(), f.e.plan->works.size());
  EXPECT_NE(timeline_comparison_text(f.timeline(), check, false).find("stage-1 tail"), std::string::npos);
}

TEST(TimelineComparison, ATimelineOfAnotherPlanIsRefused) {
  const Fixture f;
  MeasuredTimeline t = f.timeline();
  t.works.push_back({static_cast<int>(f.e.plan->works.size()) + 5, 0, 0, 0.0, 0.0, 1.0});
  EXPECT_THROW(compare_timelines(t, *f.e.prediction, f.ctx.gpu.num_cu), InputError);
}

}  // namespace
}  // namespace mlasim::validate
