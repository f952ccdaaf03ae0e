// Several sessions of one campaign as one set of rows: each configuration once, its times the median.
#include "mlasim/validate/measurement_sessions.h"

#include <gtest/gtest.h>

namespace mlasim::validate {
namespace {

MeasurementRow row(const std::string& id, double kernel_us, std::optional<double> reduce_us = std::nullopt) {
  MeasurementRow r;
  r.gpu = "h100";
  r.policy = "aiter-v1";
  r.batch = 4;
  r.context = 4096;
  r.campaign = "standard-v1";
  r.config_id = id;
  r.kernel_us = kernel_us;
  r.reduce_us = reduce_us;
  r.source = "session";
  return r;
}

TEST(SessionMedian, ThreeSessionsGiveTheMiddleTimeOfEachConfiguration) {
  const std::vector<MeasurementRow> rows = {row("a", 10, 2), row("b", 50),    row("a", 12, 4),
                                            row("b", 40),    row("a", 30, 3), row("b", 45)};
  const SessionMedian m = median_over_sessions(rows);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.max_sessions, 3);
  EXPECT_EQ(m.in_every_session, 2);
  EXPECT_EQ(m.rows[0].config_id, "a");  // the order in which configurations first appear
  EXPECT_DOUBLE_EQ(*m.rows[0].kernel_us, 12);
  EXPECT_DOUBLE_EQ(*m.rows[0].reduce_us, 3);
  EXPECT_FALSE(m.rows[1].reduce_us.has_value());  // no session measured it
  EXPECT_DOUBLE_EQ(*m.rows[1].kernel_us, 45);
  EXPECT_EQ(m.rows[0].source, "median of 3 sessions; first: session");
}

TEST(SessionMedian, TwoSessionsGiveTheirMeanAndASingleRowStaysAsItIs) {
  const SessionMedian m = median_over_sessions({row("a", 10), row("b", 7), row("a", 14)});
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.max_sessions, 2);
  EXPECT_EQ(m.in_every_session, 1);
  EXPECT_DOUBLE_EQ(*m.rows[0].kernel_us, 12);
  EXPECT_DOUBLE_EQ(*m.rows[1].kernel_us, 7);
  EXPECT_EQ(m.rows[1].source, "session");
}

TEST(SessionMedian, RowsWithoutAConfigurationIdMatchByWorkloadAndPolicy) {
  MeasurementRow a = row("", 10), b = row("", 20), other = row("", 99);
  other.policy = "fixed:splits=2";
  a.campaign = b.campaign = other.campaign = "";
  const SessionMedian m = median_over_sessions({a, other, b});
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.rows[0].kernel_us, 15);
  EXPECT_DOUBLE_EQ(*m.rows[1].kernel_us, 99);
}

}  // namespace
}  // namespace mlasim::validate
