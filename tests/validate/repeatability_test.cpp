// Repeatability of measurements: two sessions of the same configurations compared with each other.
#include "mlasim/validate/repeatability.h"

#include <gtest/gtest.h>

namespace mlasim::validate {
namespace {

MeasurementRow row(const std::string& policy, int batch, double us, const std::string& id = "") {
  MeasurementRow r;
  r.gpu = "h100";
  r.policy = policy;
  r.batch = batch;
  r.context = 4096;
  r.kernel_us = us;
  r.campaign = id.empty() ? "" : "c";
  r.config_id = id;
  return r;
}

TEST(Repeatability, IdenticalSessionsAgreeEverywhere) {
  const std::vector<MeasurementRow> a = {row("p", 1, 10), row("q", 1, 12), row("p", 2, 20), row("q", 2, 19)};
  const RepeatabilityStats s = measurement_repeatability(a, a);
  EXPECT_EQ(s.matched, 4);
  EXPECT_EQ(s.unmatched, 0);
  EXPECT_DOUBLE_EQ(s.max_abs_diff_pct, 0.0);
  EXPECT_EQ(s.workloads, 2);
  EXPECT_DOUBLE_EQ(s.best_within_3pct_pct, 100.0);
}

TEST(Repeatability, ASwappedFastestPolicyLowersTheCeiling) {
  const std::vector<MeasurementRow> a = {row("p", 1, 10), row("q", 1, 10.2), row("p", 2, 20), row("q", 2, 25)};
  // Session two: on batch 1, q is now 10 % faster than p; batch 2 keeps its order.
  const std::vector<MeasurementRow> b = {row("p", 1, 11), row("q", 1, 10), row("p", 2, 20), row("q", 2, 25),
                                         row("r", 3, 5)};
  const RepeatabilityStats s = measurement_repeatability(a, b);
  EXPECT_EQ(s.matched, 4);
  EXPECT_EQ(s.workloads, 2);
  EXPECT_DOUBLE_EQ(s.best_within_3pct_pct, 50.0);           // a's pick p on batch 1 is 10 % off b's best
  EXPECT_DOUBLE_EQ(s.best_within_3pct_reverse_pct, 100.0);  // b's pick q is 2 % off a's best
}

TEST(Repeatability, CampaignRowsMatchByConfigurationId) {
  const std::vector<MeasurementRow> a = {row("p", 1, 10, "x1"), row("q", 1, 12, "x2")};
  std::vector<MeasurementRow> b = {row("p", 1, 11, "x1"), row("q", 1, 12, "x3")};
  const RepeatabilityStats s = measurement_repeatability(a, b);
  EXPECT_EQ(s.matched, 1);
  EXPECT_EQ(s.unmatched, 1);
  EXPECT_NEAR(s.median_abs_diff_pct, 10.0, 1e-9);
}

}  // namespace
}  // namespace mlasim::validate
