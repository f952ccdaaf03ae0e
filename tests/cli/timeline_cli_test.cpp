// mlasim report --timeline on a committed measured timeline (H100, data/measurements/h100/timelines), and the
// timeline flags' bad input: one line naming the field, exit 2, no folder or file left behind.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

// Four long requests under AITER's default on the H100: 100 works on 100 SMs.
const std::string kTimeline = std::string(MLASIM_DATA_DIR) + "/measurements/h100/timelines/cf8ead7df3f69c5ec.json";
// 24 timelines of 128-head plans on an H200, gzip-compressed (data/measurements/h200/timelines_short_works).
const std::string kShortWorks = std::string(MLASIM_DATA_DIR) + "/measurements/h200/timelines_short_works/run1";

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(TimelineCli, ReportsEveryWorkMeasuredAgainstPredicted) {
  const CliResult r = run_cli("report --timeline " + kTimeline);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("per-work duration error over 100 works"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage-1 tail"), std::string::npos);
  EXPECT_NE(r.out.find("instrumentation: kernel"), std::string::npos);

  const CliResult rows = run_cli("report --rows --timeline " + kTimeline);
  ASSERT_EQ(rows.code, 0) << rows.err;
  EXPECT_GE(line_count(rows.out), line_count(r.out) + 100);  // a line per work
}

TEST(TimelineCli, JsonCarriesThePerWorkComparison) {
  const CliResult r = run_cli("report --format json --timeline " + kTimeline);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("per_work").size(), 100u);
  EXPECT_EQ(j.at("kernel_class"), "wgmma-fp8-onepass");  // 16 heads: one pass
  EXPECT_EQ(j.at("measured").at("active_cus"), 100);
  for (const auto& w : j.at("per_work")) {
    EXPECT_LE(w.at("measured_begin_us").get<double>(), w.at("measured_first_kv_us").get<double>());
    EXPECT_LE(w.at("measured_first_kv_us").get<double>(), w.at("measured_end_us").get<double>());
  }
  // Another profile predicts the same plan: the comparison changes, the works do not.
  const CliResult h200 = run_cli("report --format json --gpu h200 --timeline " + kTimeline);
  ASSERT_EQ(h200.code, 0) << h200.err;
  EXPECT_EQ(nlohmann::json::parse(h200.out).at("per_work").size(), 100u);
}

TEST(TimelineCli, ADirectoryIsOneLinePerTimelineAndTheErrorsPooled) {
  const CliResult r = run_cli("report --timeline " + kShortWorks);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("24 timelines, 628 works"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("b24x2048 h128 q1 bf16 p64 c0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median event time outside the timeline"), std::string::npos) << r.out;
  // The directory holds launches with a reduce and without: the pooled lines say what the second kernel adds.
  EXPECT_NE(r.out.find("a second kernel (the reduce) adds"), std::string::npos) << r.out;
  EXPECT_EQ(line_count(r.out), 1u + 24u + 7u) << r.out;  // header, a line each, the pooled lines

  const CliResult j =
      run_cli("report --format json --timeline " + kShortWorks + "/c8a526101160cbd91.json.gz " + kTimeline);
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json s = nlohmann::json::parse(j.out);
  ASSERT_EQ(s.at("timelines").size(), 2u);
  EXPECT_EQ(s.at("timelines")[0].at("policy"), "aiter-v1");
  EXPECT_EQ(s.at("pooled").at("works"), 4 + 100);

  const CliResult one = run_cli("report --timeline " + kShortWorks + "/ca30babef61ed3651.json.gz");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("per-work duration error over 24 works"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("outside the timeline"), std::string::npos) << one.out;

  // The figures docs/validation.md §7.1 and §7.6 quote: 24 x 2048 in two splits, whose persistent reduce the H200
  // ran with 10 workgroups per SM: 6.85 us measured; 5.10 us predicted since the fits hold the second kernel's time
  // (§7.6), 7.22 before it with the measured residency (§7.1), 8.88 with AITER's 8.
  const CliResult reduce = run_cli("report --format json --timeline " + kShortWorks + "/c7b019dec1c13b7ee.json.gz");
  ASSERT_EQ(reduce.code, 0) << reduce.err;
  const nlohmann::json c = nlohmann::json::parse(reduce.out);
  const auto span = [&c](const char* side) {
    return c.at(side).at("reduce_us").get<double>() - c.at(side).at("reduce_gap_us").get<double>();
  };
  EXPECT_NEAR(span("measured"), 6.85, 0.005);
  EXPECT_NEAR(span("predicted"), 5.10, 0.005);

  const CliResult rows = run_cli("report --rows --timeline " + kShortWorks);
  EXPECT_EQ(rows.code, 2);
  EXPECT_EQ(line_count(rows.err), 1u) << rows.err;
  EXPECT_NE(rows.err.find("rows"), std::string::npos) << rows.err;
  EXPECT_TRUE(rows.out.empty()) << rows.out;
}

// The finding docs/step.md §7 and data/measurements/h200/timelines_step_plans/README.txt quote: at 16 heads the
// model's ratio of the 2-split plan to the persistent one (aiter-v1) is short at each of the seven step workloads,
// by 0.2 to 4.1 % (0.3 to 4.1 % before the fits held the second kernel's time, docs/validation.md §7.6; 2.2 to 5.2 %
// before the 16-head class had a grid factor of its own), and within 1 % where the two plans are the same works (24
// and 32 x 8192); at 128 heads it is within 1.6 % where the split plan runs one wave (2.0 % before the second
// kernel's time) and long where it runs two (40 and 48 requests: +1.5 to +3.5 %, +3.2 to +4.5 % before).
TEST(TimelineCli, TheStepPlansTimelinesShowWhereThePolicyRatioMisses) {
  for (const char* run : {"run1", "run2"}) {
    const CliResult r = run_cli("report --format json --gpu h200 --timeline " + std::string(MLASIM_DATA_DIR) +
                                "/measurements/h200/timelines_step_plans/" + run);
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.at("timelines").size(), 24u);
    std::map<std::string, std::map<std::string, std::pair<double, double>>> kernel;  // workload -> policy -> (m, p)
    for (const auto& t : j.at("timelines"))
      kernel[t.at("workload")][t.at("policy")] = {t.at("kernel_us").at("measured").get<double>(),
                                                  t.at("kernel_us").at("predicted").get<double>()};
    ASSERT_EQ(kernel.size(), 12u);
    int h16 = 0;
    for (const auto& [workload, by_policy] : kernel) {
      const auto [am, ap] = by_policy.at("aiter-v1");
      const auto [bm, bp] = by_policy.at("fixed:splits=2");
      const double ratio_error_pct = 100 * ((bp / ap) / (bm / am) - 1);
      SCOPED_TRACE(std::string(run) + " " + workload);
      if (workload.find(" h16 ") != std::string::npos) {
        ++h16;
        EXPECT_LT(ratio_error_pct, 0.0);
        EXPECT_GT(ratio_error_pct, -4.5);
        if (workload.starts_with("b24x8192") || workload.starts_with("b32x8192")) {
          EXPECT_GT(ratio_error_pct, -1.0);  // the same works in both plans: the grid factor alone
        }
      } else if (workload.starts_with("b40x2048") || workload.starts_with("b48x2048")) {
        EXPECT_GT(ratio_error_pct, 1.0);
      } else {
        EXPECT_LT(std::abs(ratio_error_pct), 1.6);  // +0.2 to +1.5 % in the two runs
      }
    }
    EXPECT_EQ(h16, 7);
  }
}

TEST(TimelineCli, BadInputIsOneLineNamingTheField) {
  const std::string missing = temp_path("missing.json");
  CliResult r = run_cli("report --timeline " + missing);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("timeline"), std::string::npos) << r.err;

  const std::string scenario = std::string(MLASIM_DATA_DIR) + "/scenarios/atom_msb16_vs_auto.json";
  r = run_cli("report --timeline " + scenario);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("timeline"), std::string::npos) << r.err;

  r = run_cli("report --timeline " + kTimeline + " --measurements x.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("timeline"), std::string::npos) << r.err;

  r = run_cli("report");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("measurements"), std::string::npos) << r.err;
}

TEST(TimelineCli, ValidateWithoutKernelsLeavesNoTimelineFolder) {
  const std::string dir = temp_path("timelines");
  const CliResult r =
      run_cli("validate " + std::string(MLASIM_DATA_DIR) + "/campaigns/timelines.json --timeline " + dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace mlasim::cli_test
