// Several measured timelines at once: which files a directory gives, gzip-compressed timelines, and the summary's
// parts (a work, stage 1, the reduce's gap and span, the event time outside the timeline) and pooled errors.
#include "mlasim/validate/timeline_summary.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/validate/gzip_file.h"
#include "support/input_error_of.h"
#include "timeline_from_prediction.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

namespace fs = std::filesystem;

// A measured timeline made from the H200 profile's own prediction (so its errors are known), with `slower` added
// to every work's end and `outside` to the event time.
MeasuredTimeline made_timeline(const std::string& policy, double slower = 0, double outside = 0) {
  sim::Workload w;
  w.gpu = "h200";
  w.batch = sim::BatchSpec::uniform(24, 2048);
  w.heads = 128;
  w.q_dtype = DType::bf16;
  w.kv_dtype = DType::bf16;
  w.page_size = 64;
  const sim::WorkloadContext ctx = sim::resolve(w);
  const sim::Evaluation e = sim::evaluate(policy, ctx);
  MeasuredTimeline t = testing::timeline_from_prediction(*e.plan, *e.prediction);
  t.kernel = policy == "aiter-v1" ? "mla_decode_wgmma_persistent+mla_reduce" : "mla_decode_wgmma_splitkv+mla_reduce";
  t.workload = w;
  t.policy = e.source;
  for (MeasuredWork& m : t.works) m.end_us += slower;
  for (MeasuredReduceBlock& b : t.reduce) {
    b.begin_us += slower;
    b.end_us += slower;
  }
  t.kernel_us = t.end_us() + outside;
  t.instrumented_kernel_us = t.kernel_us;
  return t;
}

std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

TEST(TimelineFiles, ADirectoryGivesItsTimelinesByName) {
  const std::string dir = fresh_dir("timeline_files");
  const std::string timeline = measured_timeline_to_json(made_timeline("aiter-v1")).dump();
  write_text(dir + "/b.json", timeline);
  write_gzip(dir + "/a.json.gz", timeline);
  write_text(dir + "/predictions.json", "[]");  // JSON, not a timeline: left out and named
  write_text(dir + "/notes.txt", "");
  const std::string elsewhere = fresh_dir("timeline_files_elsewhere");
  write_text(elsewhere + "/timeline.txt", timeline);
  fs::create_directories(dir + "/sub.json");  // a directory is not a timeline, whatever its name
  std::vector<std::string> skipped;
  const std::vector<TimelineFile> files = load_timeline_files({dir, elsewhere + "/timeline.txt"}, &skipped);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(fs::path(files[0].path).filename(), "a.json.gz");
  EXPECT_EQ(fs::path(files[1].path).filename(), "b.json");
  EXPECT_EQ(fs::path(files[2].path).filename(), "timeline.txt");  // a file named is read whatever its name
  for (const TimelineFile& f : files) EXPECT_EQ(f.timeline.works.size(), made_timeline("aiter-v1").works.size());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(fs::path(skipped[0]).filename(), "predictions.json");

  // a file named that is no timeline is an error naming it
  const auto not_a_timeline = input_error_of([&] { load_timeline_files({dir + "/notes.txt"}); });
  ASSERT_TRUE(not_a_timeline) << "an empty file is not a timeline";
  EXPECT_EQ(not_a_timeline->field(), "timeline");
  EXPECT_NE(std::string(not_a_timeline->what()).find("notes.txt"), std::string::npos) << not_a_timeline->what();
  write_text(dir + "/broken.json", "{");  // a directory's file that is not JSON is an error, not skipped
  EXPECT_THROW(load_timeline_files({dir}), InputError);
  EXPECT_THROW(load_timeline_files({dir + "/missing.json"}), InputError);
  const std::string empty = fresh_dir("timeline_files_empty");
  const auto no_timelines = input_error_of([&] { load_timeline_files({empty}); });
  ASSERT_TRUE(no_timelines) << "a directory without timelines is refused";
  EXPECT_EQ(no_timelines->field(), "timeline");
  EXPECT_NE(std::string(no_timelines->what()).find("holds no measured timeline"), std::string::npos)
      << no_timelines->what();
}

TEST(TimelineFiles, AGzipTimelineReadsAsItsText) {
  const std::string dir = fresh_dir("timeline_gzip");
  const MeasuredTimeline t = made_timeline("fixed:splits=2");
  const std::string text = measured_timeline_to_json(t).dump();
  write_text(dir + "/plain.json", text);
  write_gzip(dir + "/packed.json.gz", text);
  const MeasuredTimeline plain = load_measured_timeline(dir + "/plain.json");
  const MeasuredTimeline packed = load_measured_timeline(dir + "/packed.json.gz");
  EXPECT_EQ(measured_timeline_to_json(plain), measured_timeline_to_json(packed));
  EXPECT_EQ(packed.works.size(), t.works.size());

  write_text(dir + "/broken.json.gz", std::string("\x1f\x8b\x08\x00garbage", 11));
  EXPECT_THROW(load_measured_timeline(dir + "/broken.json.gz"), InputError);

  // Two gzip members one after the other (pigz, bgzip, `cat a.gz b.gz`) read as their texts joined.
  const size_t half = text.size() / 2;
  write_gzip(dir + "/first.gz", text.substr(0, half));
  write_gzip(dir + "/second.gz", text.substr(half));
  std::ifstream first(dir + "/first.gz", std::ios::binary), second(dir + "/second.gz", std::ios::binary);
  std::ofstream(dir + "/members.json.gz", std::ios::binary) << first.rdbuf() << second.rdbuf();
  EXPECT_EQ(read_maybe_gzip(dir + "/members.json.gz", "timeline"), text);
  EXPECT_EQ(load_measured_timeline(dir + "/members.json.gz").works.size(), t.works.size());
}

TEST(TimelineSummary, SaysWhichPartTheModelMisses) {
  const std::string dir = fresh_dir("timeline_summary");
  constexpr double kNs = 2e-3;  // a timeline file keeps its times to the nanosecond
  // The persistent plan's works 3 us slower than predicted, 5 us outside; the 2-split plan's reduce 2 us later,
  // 7 us outside.
  MeasuredTimeline split = made_timeline("fixed:splits=2", 0, 5);
  for (MeasuredReduceBlock& b : split.reduce) {
    b.begin_us += 2;
    b.end_us += 2;
  }
  split.kernel_us = split.end_us() + 7;
  split.instrumented_kernel_us = split.kernel_us;
  write_text(dir + "/a.json", measured_timeline_to_json(made_timeline("aiter-v1", 3, 5)).dump());
  write_text(dir + "/b.json", measured_timeline_to_json(split).dump());

  std::vector<TimelineSummaryRow> rows;
  for (const TimelineFile& f : load_timeline_files({dir})) rows.push_back(summarize_timeline(f));
  ASSERT_EQ(rows.size(), 2u);
  const TimelineSummaryRow& unsplit = rows[0];
  EXPECT_EQ(unsplit.workload, "b24x2048 h128 q1 bf16 p64 c0");
  EXPECT_EQ(unsplit.policy, "aiter-v1");
  EXPECT_NEAR(unsplit.measured_work_us - unsplit.predicted_work_us, 3.0, kNs);
  EXPECT_NEAR(unsplit.comparison.measured_outside_us(), 5.0, kNs);
  EXPECT_EQ(unsplit.comparison.measured.reduce_us, 0.0);  // nothing split: no reduce ran
  const TimelineComparison& c = rows[1].comparison;
  EXPECT_NEAR(rows[1].measured_work_us, rows[1].predicted_work_us, kNs);
  EXPECT_NEAR(c.measured.reduce_gap_us - c.predicted.reduce_gap_us, 2.0, kNs);
  EXPECT_NEAR(c.measured_reduce_span_us(), c.predicted_reduce_span_us(), kNs);

  const nlohmann::json j = nlohmann::json::parse(timeline_summary_json(rows).dump());
  ASSERT_EQ(j.at("timelines").size(), 2u);
  EXPECT_EQ(j.at("timelines")[1].at("file"), "b.json");
  const nlohmann::json& pooled = j.at("pooled");
  EXPECT_EQ(pooled.at("works").get<size_t>(), unsplit.comparison.works.size() + c.works.size());
  EXPECT_EQ(pooled.at("median_difference_us").at("timelines_with_reduce"), 1);
  EXPECT_NEAR(pooled.at("median_difference_us").at("reduce_gap").get<double>(), -2.0, kNs);
  EXPECT_NEAR(pooled.at("median_difference_us").at("reduce").get<double>(), 0.0, kNs);
  EXPECT_NEAR(pooled.at("median_measured_outside_us").get<double>(), 6.0, kNs);  // of 5 and 7
  EXPECT_EQ(pooled.at("kernel_error").at("count"), 2);
  // What the reduce adds as a second kernel: its gap, and the 2 us more the launch with it holds outside.
  const nlohmann::json& second = pooled.at("second_kernel_us");
  EXPECT_NEAR(second.at("us").get<double>(), c.measured.reduce_gap_us + 2.0, kNs);
  EXPECT_NEAR(second.at("outside_with_reduce_us").get<double>(), 7.0, kNs);
  EXPECT_NEAR(second.at("outside_one_kernel_us").get<double>(), 5.0, kNs);
  EXPECT_EQ(second.at("reduce_launches"), 1);
  EXPECT_EQ(second.at("one_kernel_launches"), 1);

  const std::string text = timeline_summary_text(rows);
  EXPECT_NE(text.find("2 timelines,"), std::string::npos) << text;
  EXPECT_NE(text.find("the gap before it -2.00 us, the reduce "), std::string::npos) << text;
  EXPECT_NE(text.find("median event time outside the timeline: 6.00 us"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("a second kernel (the reduce) adds {:.2f} us", c.measured.reduce_gap_us + 2.0)),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("SM clock"), std::string::npos) << text;  // none counted cycles
  EXPECT_TRUE(pooled.at("sm_clock_mhz").is_null());
  // Launches of one kind alone do not say what a second kernel adds.
  const nlohmann::json split_only = nlohmann::json::parse(timeline_summary_json({rows[1]}).dump());
  EXPECT_TRUE(split_only.at("pooled").at("second_kernel_us").is_null());
  EXPECT_EQ(timeline_summary_text({rows[1]}).find("a second kernel"), std::string::npos);
}

TEST(TimelineSummary, GivesTheClockTheWorksRanAtWhereTheyCountedCycles) {
  const std::string dir = fresh_dir("timeline_summary_clock");
  MeasuredTimeline t = made_timeline("fixed:splits=2");
  for (size_t i = 0; i < t.works.size(); ++i)  // half at 1700 MHz, half at 1800: cycles = MHz x microseconds
    t.works[i].sm_cycles = static_cast<uint64_t>((i % 2 ? 1800.0 : 1700.0) * (t.works[i].end_us - t.works[i].begin_us));
  write_text(dir + "/clocked.json", measured_timeline_to_json(t).dump());
  write_text(dir + "/older.json", measured_timeline_to_json(made_timeline("aiter-v1")).dump());
  std::vector<TimelineSummaryRow> rows;
  for (const TimelineFile& f : load_timeline_files({dir})) rows.push_back(summarize_timeline(f));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].measured_sm_mhz.size(), t.works.size());
  EXPECT_TRUE(rows[1].measured_sm_mhz.empty());
  const nlohmann::json j = nlohmann::json::parse(timeline_summary_json(rows).dump());
  const nlohmann::json& clock = j.at("pooled").at("sm_clock_mhz");
  EXPECT_EQ(clock.at("timelines"), 1);
  EXPECT_EQ(clock.at("workgroups").get<size_t>(), t.works.size());
  EXPECT_NEAR(clock.at("p10").get<double>(), 1700.0, 1.0);
  EXPECT_NEAR(clock.at("p90").get<double>(), 1800.0, 1.0);
  EXPECT_TRUE(j.at("timelines")[1].at("measured_sm_mhz").is_null());
  const std::string text = timeline_summary_text(rows);
  EXPECT_NE(text.find("SM clock over the works (1 timelines counted their SMs' cycles)"), std::string::npos) << text;
}

TEST(TimelineSummary, AFileThatIsNoTimelineIsNamed) {
  const std::string dir = fresh_dir("timeline_summary_bad");
  write_text(dir + "/scenario.json", R"({"name": "not a timeline"})");
  const auto e = input_error_of([&] { load_timeline_files({dir + "/scenario.json"}); });
  ASSERT_TRUE(e) << "a scenario is not a timeline";
  EXPECT_EQ(e->field(), "timeline");
  EXPECT_NE(std::string(e->what()).find("scenario.json"), std::string::npos) << e->what();
}

}  // namespace
}  // namespace mlasim::validate
