// mlasim report --repeat: the committed H100 standard campaign against its second session; --sessions median: the
// three committed sessions as one reference (docs/validation.md §0.4-§0.5).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kFirst = std::string(MLASIM_DATA_DIR) + "/measurements/h100/campaign_standard-v1_590702c.csv";
const std::string kSecond = std::string(MLASIM_DATA_DIR) + "/measurements/h100/campaign_standard-v1_415b28b_run2.csv";

TEST(RepeatabilityCli, ComparesTwoSessionsOfOneCampaign) {
  const CliResult r = run_cli("report --gpu h100 --format json --measurements " + kFirst + " --repeat " + kSecond);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out).at("repeatability");
  EXPECT_EQ(j.at("matched"), 1136);
  EXPECT_EQ(j.at("unmatched"), 0);
  EXPECT_EQ(j.at("workloads"), 156);
  EXPECT_GT(j.at("median_abs_diff_pct").get<double>(), 0.0);
  EXPECT_LT(j.at("median_abs_diff_pct").get<double>(), 5.0);
  const CliResult text = run_cli("report --gpu h100 --measurements " + kFirst + " --repeat " + kSecond);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("measured best pick: over 156 workloads"), std::string::npos) << text.out;
}

TEST(RepeatabilityCli, TheMedianOfThreeSessionsIsOneRowPerConfiguration) {
  const std::string third = std::string(MLASIM_DATA_DIR) + "/measurements/h100/campaign_standard-v1_9f65603_run3.csv";
  const std::string sessions = " --measurements " + kFirst + " --measurements " + kSecond + " --measurements " + third;
  const CliResult r = run_cli("report --gpu h100 --format json --sessions median" + sessions);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("3408 rows are 1136 configurations, 1136 of them measured in 3 sessions"), std::string::npos)
      << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("all").at("rows"), 1136);
  EXPECT_EQ(j.at("best_policy").at("workloads"), 156);
  // The committed figure (docs/validation.md): 146 of 156 workloads.
  EXPECT_NEAR(j.at("best_policy").at("within_3pct_pct").get<double>(), 100.0 * 146 / 156, 1e-9);
  // Each session alone keeps every row: three times the rows.
  const CliResult each = run_cli("report --gpu h100 --format json" + sessions);
  ASSERT_EQ(each.code, 0) << each.err;
  EXPECT_EQ(nlohmann::json::parse(each.out).at("all").at("rows"), 3408);
}

TEST(RepeatabilityCli, ASessionOfOtherConfigurationsIsRefused) {
  const std::string other = std::string(MLASIM_DATA_DIR) + "/measurements/h100/campaign_holdout-v1_3db7d97.csv";
  const CliResult r = run_cli("report --gpu h100 --measurements " + kFirst + " --repeat " + other);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("mlasim: error: repeat: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace mlasim::cli_test
