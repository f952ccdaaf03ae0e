// mlasim report and calibrate read measurements made elsewhere: an AITER op-test log and a rocprofv3 kernel trace,
// detected or named with --measurements-format; a malformed cell is one line and exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kData = MLASIM_TEST_DATA_DIR;

TEST(MeasurementImportCli, ReportsEveryRowOfAnOpTestLog) {
  const CliResult r =
      run_cli("report --measurements " + kData + "/aiter_mla_persistent_log.txt --gpu mi355x --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u) << r.out;
  std::vector<int> lines;
  for (const auto& row : j["rows"]) lines.push_back(row["line"].get<int>());
  EXPECT_EQ(lines, (std::vector<int>{9, 10, 11, 12}));
  // The varlen row is named, not predicted.
  EXPECT_NE(r.err.find("line 13: varlen row"), std::string::npos) << r.err;
}

TEST(MeasurementImportCli, ReportsAKernelTraceForTheNamedWorkload) {
  const CliResult r = run_cli("report --measurements " + kData +
                              "/rocprofv3_kernel_trace.csv --gpu mi355x --batch 4 --context 8192 "
                              "--policy aiter-v1:max_split_per_batch=16 --measurements-format rocprof --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u) << r.out;
  EXPECT_DOUBLE_EQ(j["rows"][0]["measured_us"].get<double>(), 49.0);
}

TEST(MeasurementImportCli, MalformedCellIsOneLineAndExitTwo) {
  const std::string path = kData + "/aiter_mla_persistent_log_bad_dtype.txt";
  const CliResult r = run_cli("report --measurements " + path + " --gpu mi355x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path + " line 11, column 8 (dtype)"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(MeasurementImportCli, UnknownInputFormatIsRejected) {
  const CliResult r = run_cli("report --measurements " + kData +
                              "/aiter_mla_persistent_log.txt --measurements-format nsys --gpu mi355x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("measurements-format"), std::string::npos) << r.err;
}

TEST(MeasurementImportCli, CalibrateReadsAnOpTestLog) {
  const CliResult r = run_cli("calibrate --measurements " + kData +
                              "/aiter_mla_persistent_log.txt --gpu mi355x --free t_fix_us --holdout-every 0 "
                              "--format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fit_rows"].get<int>(), 4);
}

}  // namespace
}  // namespace mlasim::cli_test
