// The report: the metric field table, speedup defined once, and the exact output of each writer.
#include "mlasim/sim/report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/metric_fields.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;

Metrics simple(double kernel_us, int active, double occupancy) {
  Metrics m;
  m.stage1_us = kernel_us - 2;
  m.reduce_us = 2;
  m.kernel_us = kernel_us;
  m.total_us = kernel_us + 10;
  m.active_clusters = active;
  m.occupancy = occupancy;
  m.splits_per_request = {2, 1};
  m.num_works = 3;
  m.num_partials = 2;
  m.kv_bytes = 1.5e6;
  m.achieved_tbps = 0.25;
  m.critical_path_us = kernel_us;
  return m;
}

ReportRow row_a() { return {"mi355x", "aiter-v1:max_split_per_batch=16", 2, "ragged", 0, simple(10, 4, 0.5)}; }
ReportRow row_b() { return {"mi355x", "aiter-v1:max_split_per_batch=-1", 2, "ragged", 0, simple(4, 8, 0.75)}; }

TEST(MetricFields, OneEntryPerMetricInOutputOrder) {
  std::vector<std::string> names;
  for (const MetricField& f : metric_fields()) names.emplace_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"stage1_us", "reduce_us", "kernel_us", "total_us", "active_clusters",
                                             "occupancy", "splits_per_request", "num_works", "num_partials", "kv_bytes",
                                             "achieved_tbps", "critical_path_us"}));
  EXPECT_EQ(find_metric_field("kernel_us")->unit, "us");
  EXPECT_EQ(find_metric_field("achieved_tbps")->unit, "TB/s");
  EXPECT_EQ(find_metric_field("nope"), nullptr);
}

TEST(MetricFields, ValuesTextsAndComparisons) {
  const Metrics a = simple(10, 4, 0.5), b = simple(4, 8, 0.75);
  const MetricField& kernel = *find_metric_field("kernel_us");
  EXPECT_EQ(kernel.value(a), 10);
  EXPECT_EQ(kernel.text(a), "10.00");
  EXPECT_EQ(kernel.cell(a), "10");
  EXPECT_EQ(kernel.compare(a, b), "2.50x");
  EXPECT_EQ(find_metric_field("occupancy")->compare(a, b), "+25.0 pp");
  EXPECT_EQ(find_metric_field("active_clusters")->compare(a, b), "+4");
  EXPECT_EQ(find_metric_field("active_clusters")->compare(b, a), "-4");
  EXPECT_EQ(find_metric_field("achieved_tbps")->compare(a, b), "1.00x");
  const MetricField& splits = *find_metric_field("splits_per_request");
  EXPECT_EQ(splits.value(a), 1.5);
  EXPECT_EQ(splits.text(a), "2 1");
  EXPECT_EQ(splits.cell(a), "2;1");
  EXPECT_EQ(splits.compare(a, b), "");
  EXPECT_TRUE(std::isnan(splits.value(Metrics{})));
  EXPECT_EQ(kernel.compare(a, Metrics{}), "");  // no division by a zero time
}

TEST(Speedup, IsAOverBAndZeroWithoutATime) {
  EXPECT_DOUBLE_EQ(speedup(simple(10, 1, 1), simple(4, 1, 1)), 2.5);
  EXPECT_EQ(speedup(simple(10, 1, 1), Metrics{}), 0.0);
  const Comparison c = Comparison::of(row_a(), row_b());
  EXPECT_DOUBLE_EQ(c.speedup, 2.5);
  EXPECT_EQ(c.a, row_a());
}

TEST(ReportWriter, UnknownFormatNamesTheChoices) {
  const auto e = input_error_of([&] { make_report_writer("xml"); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(std::string(e->what()), "format: must be text, json or csv, got 'xml'");
}

constexpr const char* kMetricsText =
    "stage1_us           8.00\n"
    "reduce_us           2.00\n"
    "kernel_us           10.00\n"
    "total_us            20.00\n"
    "active_clusters     4\n"
    "occupancy           50.0 %\n"
    "splits_per_request  2 1\n"
    "num_works           3\n"
    "num_partials        2\n"
    "kv_bytes            1.5 MB\n"
    "achieved_tbps       0.25\n"
    "critical_path_us    10.00\n";

TEST(TextWriter, RowIsTheMetricLines) { EXPECT_EQ(make_report_writer("text")->row(row_a()), kMetricsText); }

TEST(TextWriter, ComparisonIsSideBySideWithTheSpeedup) {
  EXPECT_EQ(make_report_writer("text")->comparison(Comparison::of(row_a(), row_b())),
            "                     A                                B\n"
            "policy               aiter-v1:max_split_per_batch=16  aiter-v1:max_split_per_batch=-1\n"
            "stage1_us            8.00                             2.00\n"
            "reduce_us            2.00                             2.00\n"
            "kernel_us            10.00                            4.00\n"
            "total_us             20.00                            14.00\n"
            "active_clusters      4                                8\n"
            "occupancy            50.0 %                           75.0 %\n"
            "splits_per_request   2 1                              2 1\n"
            "num_works            3                                3\n"
            "num_partials         2                                2\n"
            "kv_bytes             1.5 MB                           1.5 MB\n"
            "achieved_tbps        0.25                             0.25\n"
            "critical_path_us     10.00                            4.00\n"
            "speedup (A kernel_us / B kernel_us): 2.500\n");
}

TEST(TextWriter, ComparisonNamesBothGpusWhenTheyDiffer) {
  ReportRow b = row_b();
  b.gpu = "mi300x";
  const std::string text = make_report_writer("text")->comparison(Comparison::of(row_a(), b));
  EXPECT_NE(text.find("\ngpu                  mi355x                           mi300x\n"), std::string::npos) << text;
}

TEST(TextWriter, TableAlignsEveryColumn) {
  const ReportRow rows[] = {row_a(), row_b()};
  const std::string table = make_report_writer("text")->table(rows);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "gpu     batch  context  clusters  policy                           stage1_us  reduce_us  kernel_us  "
            "total_us  active_clusters  occupancy  splits_per_request  num_works  num_partials  kv_bytes  "
            "achieved_tbps  critical_path_us");
  EXPECT_NE(table.find("\nmi355x  2      ragged   0         aiter-v1:max_split_per_batch=-1  2.00       2.00       "
                       "4.00       14.00     8                75.0 %     2 1                 3          2             "
                       "1.5 MB    0.25           4.00\n"),
            std::string::npos)
      << table;
}

TEST(JsonWriter, RowComparisonAndTable) {
  const auto w = make_report_writer("json");
  const nlohmann::json row = nlohmann::json::parse(w->row(row_a()));
  EXPECT_EQ(row["gpu"], "mi355x");
  EXPECT_EQ(row["context"], "ragged");
  EXPECT_EQ(row["kernel_us"], 10.0);
  EXPECT_EQ(row["splits_per_request"], nlohmann::json::array({2, 1}));
  EXPECT_EQ(w->row(row_a()).substr(0, 28), "{\n  \"achieved_tbps\": 0.25,\n ");
  const nlohmann::json c = nlohmann::json::parse(w->comparison(Comparison::of(row_a(), row_b())));
  EXPECT_EQ(c["speedup"], 2.5);
  EXPECT_EQ(c["a"], row);
  ReportRow uniform = row_b();
  uniform.context = "4096";
  const ReportRow rows[] = {row_a(), uniform};
  const nlohmann::json table = nlohmann::json::parse(w->table(rows));
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[1]["context"], 4096);
}

TEST(CsvWriter, RowTableAndComparisonShareOneLayout) {
  const auto w = make_report_writer("csv");
  const std::string header =
      "gpu,batch,context,clusters,policy,stage1_us,reduce_us,kernel_us,total_us,active_clusters,occupancy,"
      "splits_per_request,num_works,num_partials,kv_bytes,achieved_tbps,critical_path_us";
  const std::string a = "mi355x,2,ragged,0,aiter-v1:max_split_per_batch=16,8,2,10,20,4,0.5,2;1,3,2,1500000,0.25,10";
  const std::string b = "mi355x,2,ragged,0,aiter-v1:max_split_per_batch=-1,2,2,4,14,8,0.75,2;1,3,2,1500000,0.25,4";
  EXPECT_EQ(w->row(row_a()), header + "\n" + a + "\n");
  const ReportRow rows[] = {row_a(), row_b()};
  EXPECT_EQ(w->table(rows), header + "\n" + a + "\n" + b + "\n");
  EXPECT_EQ(w->comparison(Comparison::of(row_a(), row_b())),
            "side," + header + ",speedup\nA," + a + ",2.5\nB," + b + ",2.5\n");
}

TEST(CsvWriter, QuotesCellsThatNeedIt) {
  ReportRow r = row_a();
  r.policy = "fixed:splits=4,granule=16";
  EXPECT_NE(report_csv_row(r).find(",\"fixed:splits=4,granule=16\","), std::string::npos);
}

}  // namespace
}  // namespace mlasim::sim
