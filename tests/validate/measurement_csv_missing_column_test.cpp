// A measurement CSV with a time_ratio column but no vs_policy column: the row's error is one InputError naming
// vs_policy, not std::out_of_range from looking up the absent column (found by fuzz/measurement_csv_fuzz;
// docs/reliability.md).
#include <gtest/gtest.h>

#include <string>

#include "mlasim/model/input_error.h"
#include "mlasim/validate/measurement_csv.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

TEST(MeasurementCsvMissingColumn, ATimeRatioWithoutAVsPolicyColumnIsAnInputError) {
  const std::string csv =
      "gpu,kernel,policy,batch,context,heads,qo_len,q_dtype,kv_dtype,page_size,clusters,stage1_us,reduce_us,"
      "kernel_us,kv_bytes,kv_tbps,max_abs_err,driver,commit,date,time_ratio\n"
      "h100,k,aiter-v1,1,100,16,1,bf16,bf16,1,0,,,,,,,d,c,2026-11-24,1.5\n";
  const auto e = input_error_of([&] { parse_measurement_csv(csv, "x.csv"); });
  ASSERT_TRUE(e) << "expected an InputError";
  EXPECT_EQ(e->field(), "vs_policy");
  EXPECT_NE(std::string(e->what()).find("x.csv line 2"), std::string::npos) << e->what();
}

}  // namespace
}  // namespace mlasim::validate
