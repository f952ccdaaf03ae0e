// Importers of measurements made elsewhere: the AITER op-test log (markdown table and its CSV) and the rocprofv3
// kernel trace; malformed cells name file, line and column.
#include "mlasim/validate/measurement_import.h"

#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

const std::string kData = MLASIM_TEST_DATA_DIR;

std::string error_of(const std::string& path, MeasurementFormat format, const ImportContext& ctx = {}) {
  const auto e = input_error_of([&] { import_measurement_file(path, format, ctx); });
  return e ? e->what() : "";
}

TEST(MeasurementImport, DetectsTheFormatFromTheContent) {
  EXPECT_EQ(detect_measurement_format("x\n[aiter] mla_persistent summary (markdown):\n| ctx_lens |\n"),
            MeasurementFormat::aiter_log);
  EXPECT_EQ(detect_measurement_format(",ctx_lens,batch_size,decode:asm_576\n0,1,2,3\n"), MeasurementFormat::aiter_log);
  EXPECT_EQ(detect_measurement_format("\"Kind\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"),
            MeasurementFormat::rocprof);
  EXPECT_EQ(detect_measurement_format("gpu,kernel,policy\n"), MeasurementFormat::csv);
  EXPECT_EQ(parse_measurement_format("aiter-log", "f"), MeasurementFormat::aiter_log);
  EXPECT_THROW(parse_measurement_format("nsys", "f"), InputError);
}

TEST(MeasurementImport, ReadsTheOpTestMarkdownTable) {
  ImportContext ctx;
  ctx.gpu = "mi355x";
  ctx.num_cu = 256;
  const MeasurementImport m =
      import_measurement_file(kData + "/aiter_mla_persistent_log.txt", MeasurementFormat::automatic, ctx);
  ASSERT_EQ(m.rows.size(), 4u);
  const MeasurementRow& a = m.rows[0];
  EXPECT_EQ(a.gpu, "mi355x");
  EXPECT_EQ(a.line, 9);
  EXPECT_EQ(a.policy, "aiter-v1:max_split_per_batch=16");
  EXPECT_EQ(a.batch, 8);
  EXPECT_EQ(a.context, 1024);
  EXPECT_EQ(a.heads, 16);
  EXPECT_EQ(a.qo_len, 1);
  EXPECT_EQ(a.q_dtype, DType::fp8);
  EXPECT_EQ(a.kv_dtype, DType::fp8);
  EXPECT_DOUBLE_EQ(*a.kernel_us, 14.21);
  EXPECT_NE(a.source.find("test_mla_persistent.py"), std::string::npos);
  EXPECT_EQ(m.rows[2].policy, "aiter-nonpersistent");
  EXPECT_EQ(m.rows[2].q_dtype, DType::bf16);
  EXPECT_EQ(m.rows[2].page_size, 1);
  // 128 heads: the test caps max_split_per_batch at ceil(256 CUs / 64) = 4.
  EXPECT_EQ(m.rows[3].heads, 128);
  EXPECT_EQ(m.rows[3].policy, "aiter-v1:max_split_per_batch=4");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("line 13: varlen row"), std::string::npos) << m.notes[0];
  EXPECT_NE(m.notes[0].find("random.uniform"), std::string::npos);
}

TEST(MeasurementImport, ReadsTheOpTestTableAsCsv) {
  const MeasurementImport m =
      import_measurement_file(kData + "/aiter_mla_persistent_summary.csv", MeasurementFormat::automatic, {});
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[1].line, 3);
  EXPECT_EQ(m.rows[1].qo_len, 2);
  EXPECT_EQ(m.rows[1].kv_dtype, DType::bf16);
  EXPECT_DOUBLE_EQ(*m.rows[1].kernel_us, 120.5);
}

TEST(MeasurementImport, MalformedOpTestCellNamesFileLineAndColumn) {
  const std::string path = kData + "/aiter_mla_persistent_log_bad_dtype.txt";
  EXPECT_EQ(error_of(path, MeasurementFormat::automatic),
            "dtype: " + path +
                " line 11, column 8 (dtype): must be a torch dtype (torch.float8_e4m3fn, torch.float8_e4m3fnuz or "
                "torch.bfloat16), got 'torch.float16'");
}

TEST(MeasurementImport, ALogWithoutTheTableIsOneError) {
  EXPECT_THROW(import_aiter_log("[aiter] nothing measured\n", "run.log", {}), InputError);
  const auto e = input_error_of([&] { import_aiter_log("[aiter] nothing measured\n", "run.log", {}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "aiter-log");
  EXPECT_EQ(std::string(e->what()).find('\n'), std::string::npos);
}

TEST(MeasurementImport, ClassifiesKernelNames) {
  EXPECT_TRUE(is_mla_stage1_kernel("mla_a8w8_qh16_qseqlen1_gqaratio16_ps"));
  EXPECT_TRUE(is_mla_stage1_kernel("_ZN5aiter36mla_a8w8_qh16_qseqlen1_gqaratio16_psE"));
  EXPECT_TRUE(is_mla_stage1_kernel("mla_dec_stage1_bf16_a16w16"));
  EXPECT_TRUE(is_mla_stage1_kernel("void mla_decode_kernel<128>(Params)"));
  EXPECT_FALSE(is_mla_stage1_kernel("void aiter::kn_get_mla_metadata_v1<64>(P)"));
  EXPECT_TRUE(is_mla_reduce_kernel("void aiter::kn_mla_reduce_v1_ps<512, 16, false>(P)"));
  EXPECT_TRUE(is_mla_reduce_kernel("_fwd_kernel_stage2_asm"));
  EXPECT_FALSE(is_mla_reduce_kernel("mla_a8w8_qh16_qseqlen1_gqaratio16_ps"));
}

TEST(MeasurementImport, PairsStageOneWithItsReduceAndTakesMedians) {
  ImportContext ctx;
  ctx.gpu = "mi300x";
  ctx.workload.policy = "aiter-v1:max_split_per_batch=16";
  ctx.workload.batch = 4;
  ctx.workload.context = 8192;
  const MeasurementImport m =
      import_measurement_file(kData + "/rocprofv3_kernel_trace.csv", MeasurementFormat::automatic, ctx);
  ASSERT_EQ(m.rows.size(), 1u);
  const MeasurementRow& r = m.rows[0];
  EXPECT_EQ(r.gpu, "mi300x");
  EXPECT_EQ(r.kernel, "mla_a8w8_qh16_qseqlen1_gqaratio16_ps");
  EXPECT_EQ(r.policy, "aiter-v1:max_split_per_batch=16");
  EXPECT_EQ(r.batch, 4);
  EXPECT_EQ(r.context, 8192);
  EXPECT_EQ(r.line, 3);
  EXPECT_DOUBLE_EQ(*r.stage1_us, 41.0);
  EXPECT_DOUBLE_EQ(*r.reduce_us, 6.5);
  EXPECT_DOUBLE_EQ(*r.kernel_us, 49.0);
  EXPECT_NE(r.source.find("median of 2 launches"), std::string::npos) << r.source;
}

TEST(MeasurementImport, MalformedTraceCellNamesFileLineAndColumn) {
  const std::string path = kData + "/rocprofv3_kernel_trace_bad_timestamp.csv";
  EXPECT_EQ(error_of(path, MeasurementFormat::rocprof),
            "Start_Timestamp: " + path +
                " line 5, column 10 (Start_Timestamp): must be an integer >= 0, got '15518740613OOOOO'");
}

TEST(MeasurementImport, ATraceWithoutStageOneIsAnError) {
  EXPECT_THROW(import_rocprof_trace("Kernel_Name,Start_Timestamp,End_Timestamp\nfoo,1,2\n", "t.csv", {}), InputError);
}

}  // namespace
}  // namespace mlasim::validate
