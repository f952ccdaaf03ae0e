#include "mlasim/validate/public_measurements.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

const std::string kPublicHeader =
    "gpu,kernel,q_dtype,kv_dtype,batch,context,q_heads,kv_heads,qseqlen,page_size,split_setting,metric,value,unit,"
    "source";

TEST(PublicMeasurements, ProfileNamesFromLabels) {
  EXPECT_EQ(profile_name_for_label("MI355X (gfx950, 'MI35x')"), "mi355x");
  EXPECT_EQ(profile_name_for_label("MI350 (gfx950)"), "mi350x");
  EXPECT_EQ(profile_name_for_label("H100 (SXM, Modal)"), "h100");
  EXPECT_EQ(profile_name_for_label("Hopper (H100/H200 unspecified)"), "hopper");
}

TEST(PublicMeasurements, KernelTimeWithItsSplitSetting) {
  const auto imp = import_public_measurements(
      kPublicHeader +
          "\nMI355X,\"asm, persistent\",fp8,fp8,64,8192,32,1,4,1,test default (-ms 32 unless overridden),"
          "kernel_time,131.592,us,PR #3003\n",
      "p.csv");
  ASSERT_EQ(imp.rows.size(), 1u);
  const MeasurementRow& r = imp.rows[0];
  EXPECT_EQ(r.gpu, "mi355x");
  EXPECT_EQ(r.policy, "aiter-v1:max_split_per_batch=32");
  EXPECT_EQ(r.heads, 32);
  EXPECT_EQ(r.qo_len, 4);
  EXPECT_EQ(r.context, 8192);
  EXPECT_DOUBLE_EQ(*r.kernel_us, 131.592);
  EXPECT_FALSE(r.reduce_us.has_value());
  EXPECT_EQ(r.source, "PR #3003");
}

TEST(PublicMeasurements, AssumptionsFillWhatThePublicationLeftOut) {
  const auto imp = import_public_measurements(
      kPublicHeader +
          ",assumptions\nMI300X,HIP reduce,-,-,1,-,16,1,1,-,128 splits,reduce_kernel_time_graph,"
          "13.8,us (derived),PR #3901,policy=aiter-v1:max_split_per_batch=128; context=65536; page_size=1; "
          "q_dtype=fp8; kv_dtype=fp8\n",
      "p.csv");
  ASSERT_EQ(imp.rows.size(), 1u) << (imp.skipped.empty() ? "" : imp.skipped[0]);
  EXPECT_EQ(imp.rows[0].policy, "aiter-v1:max_split_per_batch=128");
  EXPECT_EQ(imp.rows[0].context, 65536);
  EXPECT_DOUBLE_EQ(*imp.rows[0].reduce_us, 13.8);
}

TEST(PublicMeasurements, SkipsNonTimesWithAReason) {
  const auto imp = import_public_measurements(
      kPublicHeader + "\nMI355X,hw_spec,-,-,-,-,-,-,-,-,-,compute_units,256,CUs,ROCm docs\n", "p.csv");
  EXPECT_TRUE(imp.rows.empty());
  EXPECT_EQ(imp.skipped,
            (std::vector<std::string>{"p.csv line 2: metric 'compute_units' is not a kernel time or time ratio"}));
}

TEST(PublicMeasurements, SkipsARowWithoutAPolicy) {
  const auto imp = import_public_measurements(
      kPublicHeader + "\nMI308X,asm,fp8,fp8,1,21,128,1,1,1,test default,kernel_time,19.2,us,PR #2039\n", "p.csv");
  EXPECT_TRUE(imp.rows.empty());
  ASSERT_EQ(imp.skipped.size(), 1u);
  EXPECT_NE(imp.skipped[0].find("split_setting 'test default' names no policy"), std::string::npos);
}

TEST(PublicMeasurements, BadAssumptionKeyIsAnInputError) {
  const auto e = input_error_of([&] {
    import_public_measurements(kPublicHeader +
                                   ",assumptions\nMI300X,k,fp8,fp8,1,9,16,1,1,1,-ms 4,kernel_time,1,us,s,"
                                   "heads=16\n",
                               "p.csv");
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "assumptions");
  EXPECT_NE(std::string(e->what()).find("p.csv line 2"), std::string::npos);
}

TEST(PublicMeasurements, MeasurementReaderRecognisesThePublicFormat) {
  const auto rows = parse_measurement_csv(
      kPublicHeader + "\nMI355X,asm,fp8,fp8,1,21,32,1,4,1,-ms 32,kernel_time,15.76,us,PR #3003\n", "p.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].policy, "aiter-v1:max_split_per_batch=32");
}

TEST(PublicMeasurements, ImportsTheReferenceFile) {
  std::ifstream in(std::string(MLASIM_REFERENCE_DIR) + "/public_measurements.csv");
  if (!in) GTEST_SKIP() << "reference data not beside the checkout";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto imp = import_public_measurements(text, "public_measurements.csv");
  // Every row is either imported or skipped with a reason.
  EXPECT_GT(imp.rows.size(), 30u);
  EXPECT_EQ(imp.rows.size() + imp.skipped.size(), static_cast<size_t>(std::count(text.begin(), text.end(), '\n') - 1));
}

}  // namespace
}  // namespace mlasim::validate
