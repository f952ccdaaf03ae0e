// Metrics and timelines as text, JSON and CSV: exact round trips and pinned layouts.
#include "mlasim/sim/metrics_format.h"

#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;

Metrics sample() {
  Metrics m;
  m.stage1_us = 47.6;
  m.reduce_us = 6.7265625;
  m.kernel_us = 54.3515625;
  m.total_us = 65.3515625;
  m.active_clusters = 256;
  m.occupancy = 0.1 + 0.2;  // not exactly representable in short decimal form
  m.splits_per_request = {64, 65, 65, 65};
  m.num_works = 259;
  m.num_partials = 259;
  m.kv_bytes = 230400000;
  m.achieved_tbps = 230400000 / 54.3515625 / 1e6;
  m.critical_path_us = 54.3515625;
  return m;
}

TEST(MetricsFormat, NamesAreTheMemberNamesInOrder) {
  EXPECT_EQ(metric_names(),
            (std::vector<std::string>{"stage1_us", "reduce_us", "kernel_us", "total_us", "active_clusters", "occupancy",
                                      "splits_per_request", "num_works", "num_partials", "kv_bytes", "achieved_tbps",
                                      "critical_path_us"}));
}

TEST(MetricsFormat, JsonRoundTripIsExact) { EXPECT_EQ(metrics_from_json(metrics_to_json(sample())), sample()); }

TEST(MetricsFormat, JsonTextRoundTripIsExact) {
  EXPECT_EQ(metrics_from_json(nlohmann::json::parse(metrics_to_json(sample()).dump())), sample());
}

TEST(MetricsFormat, CsvRoundTripIsExact) {
  EXPECT_EQ(metrics_from_csv(metrics_csv_header(), metrics_csv_row(sample())), sample());
}

TEST(MetricsFormat, CsvHeaderIsTheNames) {
  EXPECT_EQ(metrics_csv_header(),
            "stage1_us,reduce_us,kernel_us,total_us,active_clusters,occupancy,splits_per_request,num_works,"
            "num_partials,kv_bytes,achieved_tbps,critical_path_us");
}

TEST(MetricsFormat, CsvRowWritesSplitsAsOneCell) {
  Metrics m;
  m.splits_per_request = {1, 2, 3};
  EXPECT_EQ(metrics_csv_row(m), "0,0,0,0,0,0,1;2;3,0,0,0,0,0");
}

TEST(MetricsFormat, CsvReadsMetricsAmongOtherColumns) {
  const Metrics m = sample();
  const std::string header = "policy," + metrics_csv_header() + ",batch";
  const std::string row = "aiter-v1," + metrics_csv_row(m) + ",4\n";
  EXPECT_EQ(metrics_from_csv(header, row), m);
}

TEST(MetricsFormat, CsvMissingColumnNamesIt) {
  const auto e = input_error_of([&] { metrics_from_csv("stage1_us", "1"); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "reduce_us");
}

TEST(MetricsFormat, CsvBadNumberNamesTheColumn) {
  std::string row = metrics_csv_row(sample());
  row.replace(0, row.find(','), "fast");
  const auto e = input_error_of([&] { metrics_from_csv(metrics_csv_header(), row); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "stage1_us");
}

TEST(MetricsFormat, JsonWrongTypeNamesTheKey) {
  nlohmann::json j = metrics_to_json(sample());
  j["num_works"] = 2.5;
  const auto e = input_error_of([&] { metrics_from_json(j); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "num_works");
}

TEST(MetricsFormat, TextHasOneAlignedLinePerMetric) {
  EXPECT_EQ(metrics_text(sample()),
            "stage1_us           47.60\n"
            "reduce_us           6.73\n"
            "kernel_us           54.35\n"
            "total_us            65.35\n"
            "active_clusters     256\n"
            "occupancy           30.0 %\n"
            "splits_per_request  64 65 65 65\n"
            "num_works           259\n"
            "num_partials        259\n"
            "kv_bytes            230.4 MB\n"
            "achieved_tbps       4.24\n"
            "critical_path_us    54.35\n");
}

TEST(MetricsFormat, TextSummarisesLongSplitLists) {
  Metrics m;
  m.splits_per_request = {1, 1, 1, 1, 1, 1, 1, 1, 4};
  EXPECT_NE(metrics_text(m).find("splits_per_request  1..4, mean 1.33 over 9 requests\n"), std::string::npos);
}

TEST(MetricsFormat, TimelineJsonCarriesEveryBox) {
  const Gpu gpu = load_gpu("mi355x");
  const DecodeBatch batch = DecodeBatch::uniform(4, 100000);
  const Plan plan = make_policy("aiter-v1")->plan(PlanRequest{batch, gpu, 0});
  const Prediction p = simulate(plan, batch, gpu, cost_params_for(gpu));
  const nlohmann::json j = prediction_to_json(p);
  EXPECT_EQ(j["timeline"]["rows"].size(), 256u);
  EXPECT_EQ(j["timeline"]["rows"][63].size(), 2u);  // cluster 63 closes request 0 and opens request 1
  EXPECT_EQ(j["timeline"]["rows"][63][1]["request"], 1);
  EXPECT_EQ(j["timeline"]["reduce"].size(), 4u);
  EXPECT_EQ(j["timeline"]["reduce"][0]["heads"], 16);
  EXPECT_EQ(metrics_to_json(metrics_from_json(j["metrics"])), j["metrics"]);
  EXPECT_EQ(j["kernel_class"], "asm-a8w8-qh16");
  EXPECT_GT(j["read_bytes"].get<double>(), p.metrics.kv_bytes * 0.999);  // the KV plus the reduce's partials
  EXPECT_GT(j["write_bytes"].get<double>(), 0);
}

}  // namespace
}  // namespace mlasim::sim
