#include "mlasim/validate/measurement_csv.h"

#include <gtest/gtest.h>

#include "mlasim/model/csv_cell.h"
#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

const std::string kHeader =
    "gpu,kernel,policy,batch,context,heads,qo_len,q_dtype,kv_dtype,page_size,clusters,stage1_us,reduce_us,"
    "kernel_us,kv_bytes,kv_tbps,max_abs_err,driver,commit,date\n";
const std::string kRow =
    "h100,mla_decode_persistent,aiter-v1:max_split_per_batch=-1,4,100000,16,1,bf16,bf16,64,132,80.5,4.5,85,"
    "460800000,5.42,0.004,cuda 13.0,abc1234,2026-11-21\n";

// The InputError a text raises, as "field|message".
std::string error_of(const std::string& text) {
  const auto e = input_error_of([&] { parse_measurement_csv(text, "m.csv"); });
  return e ? e->field() + "|" + e->what() : "no error";
}

TEST(MeasurementCsv, ReadsEveryColumn) {
  const auto rows = parse_measurement_csv(kHeader + kRow, "m.csv");
  ASSERT_EQ(rows.size(), 1u);
  const MeasurementRow& r = rows[0];
  EXPECT_EQ(r.gpu, "h100");
  EXPECT_EQ(r.policy, "aiter-v1:max_split_per_batch=-1");
  EXPECT_EQ(r.batch, 4);
  EXPECT_EQ(r.context, 100000);
  EXPECT_EQ(r.kv_dtype, DType::bf16);
  EXPECT_EQ(r.page_size, 64);
  EXPECT_EQ(r.clusters, 132);
  EXPECT_DOUBLE_EQ(*r.kernel_us, 85.0);
  EXPECT_DOUBLE_EQ(*r.reduce_us, 4.5);
  EXPECT_EQ(r.date, "2026-11-21");
  EXPECT_EQ(r.line, 2);
}

TEST(MeasurementCsv, RaggedContextAndEmptyStages) {
  const auto rows =
      parse_measurement_csv(kHeader + "h100,k,aiter-v1,3,ragged,16,1,fp8,fp8,1,0,,,12.5,,,,d,c,2026-11-21\n", "m.csv");
  EXPECT_FALSE(rows[0].context.has_value());
  EXPECT_FALSE(rows[0].stage1_us.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].kernel_us, 12.5);
}

TEST(MeasurementCsv, RoundTripsThroughTheWriter) {
  auto rows = parse_measurement_csv(kHeader + kRow, "m.csv");
  rows[0].source = "bench run, \"quoted\"";
  const auto back = parse_measurement_csv(format_measurement_csv(rows), "again.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].source, rows[0].source);
  EXPECT_EQ(back[0].kernel_us, rows[0].kernel_us);
  EXPECT_EQ(back[0].kv_bytes, rows[0].kv_bytes);
  EXPECT_EQ(back[0].policy, rows[0].policy);
}

TEST(MeasurementCsv, BadBatchNamesColumnAndLine) {
  std::string row = kRow;
  row.replace(row.find(",4,"), 3, ",x,");
  EXPECT_EQ(error_of(kHeader + row), "batch|batch: m.csv line 2: must be an integer >= 1, got 'x'");
}

TEST(MeasurementCsv, NegativeTimeNamesColumnAndLine) {
  std::string row = kRow;
  row.replace(row.find(",85,"), 4, ",-85,");
  EXPECT_EQ(error_of(kHeader + row), "kernel_us|kernel_us: m.csv line 2: must be empty or a number > 0, got '-85'");
}

TEST(MeasurementCsv, AZeroTimeIsRefusedAZeroReduceIsNot) {
  std::string row = kRow;
  row.replace(row.find(",85,"), 4, ",0,");
  EXPECT_EQ(error_of(kHeader + row), "kernel_us|kernel_us: m.csv line 2: must be empty or a number > 0, got '0'");
  std::string no_reduce = kRow;  // a plan without partials runs no reduce: 0 is a measurement
  no_reduce.replace(no_reduce.find(",4.5,"), 5, ",0,");
  EXPECT_EQ(error_of(kHeader + no_reduce), "no error");
}

TEST(MeasurementCsv, BadDtypeNamesColumnAndLine) {
  std::string row = kRow;
  row.replace(row.find("bf16,bf16"), 9, "bf16,int4");
  const std::string e = error_of(kHeader + row);
  EXPECT_EQ(e.substr(0, e.find('|')), "kv_dtype");
  EXPECT_NE(e.find("m.csv line 2"), std::string::npos);
}

TEST(MeasurementCsv, RowWithoutAnyTime) {
  EXPECT_EQ(error_of(kHeader + "h100,k,aiter-v1,3,100,16,1,fp8,fp8,1,0,,,,,,,d,c,x\n"),
            "kernel_us|kernel_us: m.csv line 2: a row needs at least one of stage1_us, reduce_us, kernel_us, got ''");
}

TEST(MeasurementCsv, MissingColumn) {
  const std::string e = error_of("gpu,kernel\nh100,k\n");
  EXPECT_EQ(e.substr(0, e.find(" (needs")), "csv|csv: m.csv line 1: missing column 'policy'");
}

TEST(MeasurementCsv, WrongCellCount) {
  EXPECT_EQ(error_of(kHeader + "h100,k\n"), "csv|csv: m.csv line 2: has 2 cells, the header has 20");
}

TEST(MeasurementCsv, UnclosedQuote) {
  EXPECT_EQ(error_of(kHeader + "\"h100,k\n"), "csv|csv: m.csv line 2: a quoted cell is not closed");
}

TEST(MeasurementCsv, EmptyFile) { EXPECT_EQ(error_of(""), "csv|csv: m.csv is empty (needs a header line)"); }

TEST(MeasurementCsv, MissingFile) { EXPECT_THROW(read_measurement_csv("/nonexistent/m.csv"), InputError); }

TEST(CsvRecord, QuotedCommasAndDoubledQuotes) {
  EXPECT_EQ(split_csv_record("a,\"b,c\",\"say \"\"hi\"\"\",", "x"),
            (std::vector<std::string>{"a", "b,c", "say \"hi\"", ""}));
}

TEST(CsvRecord, CellQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_cell("plain"), "plain");
  EXPECT_EQ(csv_cell("a,\"b\""), "\"a,\"\"b\"\"\"");
}

}  // namespace
}  // namespace mlasim::validate
