// mlasim calibrate and report end to end: a profile is recovered from times the simulator itself produced with
// known parameters; bad measurement input is one line and exit 2; the written profile keeps its datasheet fields.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::cli_test {
namespace {

const std::string kProfile = std::string(MLASIM_DATA_DIR) + "/gpus/mi355x.json";

// mi355x's datasheet under another name, with the given cost parameters.
std::string profile_with(const nlohmann::json& params) {
  nlohmann::json j = nlohmann::json::parse(read_file(kProfile));
  j["name"] = "calibtest";
  j["params"] = nlohmann::json::object();
  for (const auto& [k, v] : params.items()) j["params"][k] = {{"value", v}, {"kind", "assumed"}, {"source", "test"}};
  const std::string path = temp_path("calibtest.json");
  write_file(path, j.dump(2));
  return path;
}

// Measurement rows made by sweeping `profile`: the "measured" times are the model's own.
std::string synthetic_measurements(const std::string& profile) {
  const std::string sweep = temp_path("truth.csv");
  const CliResult r = run_cli("sweep --quiet --gpu " + profile +
                              " --batch 1,4,16,64 --context 300,4000,32000 --policy aiter-v1:max_split_per_batch=32 "
                              "--policy aiter-v1:max_split_per_batch=4 --out " +
                              sweep);
  EXPECT_EQ(r.code, 0) << r.err;
  std::istringstream in(read_file(sweep));
  std::string header, line;
  std::getline(in, header);
  std::vector<validate::MeasurementRow> rows;
  while (std::getline(in, line)) {
    const auto cells = validate::split_csv_record(line, "sweep");
    validate::MeasurementRow m;
    m.gpu = cells[0];
    m.kernel = "simulated";
    m.batch = std::stoi(cells[1]);
    m.context = std::stoi(cells[2]);
    m.policy = cells[4];
    m.kernel_us = sim::metrics_from_csv(header, line).kernel_us;
    rows.push_back(m);
  }
  const std::string path = temp_path("measurements.csv");
  write_file(path, validate::format_measurement_csv(rows));
  return path;
}

TEST(CalibrateCli, RecoversTheParametersThatMadeTheTimes) {
  const nlohmann::json truth{{"t_fix_us", 4.0}, {"b_hbm_tbps", 5.0}, {"reduce_block_us", 0.8}, {"beta_cu_gbps", 30.0}};
  const std::string measurements = synthetic_measurements(profile_with(truth));
  const std::string start =
      profile_with({{"t_fix_us", 8.0}, {"b_hbm_tbps", 7.0}, {"reduce_block_us", 2.0}, {"beta_cu_gbps", 30.0}});
  const std::string out = temp_path("fitted.json");
  const CliResult r =
      run_cli("calibrate --measurements " + measurements + " --gpu " + start +
              " --free t_fix_us,b_hbm_tbps,reduce_block_us --out " + out + " --date 2026-01-02 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rows"].size(), 24u);
  EXPECT_EQ(report["held_out_rows"], 6);
  EXPECT_LT(report["held_out_mape_pct"].get<double>(), 0.1);
  const auto fitted = nlohmann::json::parse(read_file(out));
  for (const char* key : {"t_fix_us", "b_hbm_tbps", "reduce_block_us"}) {
    EXPECT_NEAR(fitted["params"][key]["value"].get<double>(), truth[key].get<double>(), 1e-3 * truth[key].get<double>())
        << key;
    EXPECT_EQ(fitted["params"][key]["kind"], "fitted");
    const std::string source = fitted["params"][key]["source"];
    EXPECT_NE(source.find("2026-01-02"), std::string::npos) << source;
    EXPECT_NE(source.find(measurements), std::string::npos) << source;
  }
  EXPECT_EQ(fitted["params"]["beta_cu_gbps"]["kind"], "assumed");  // not in --free: untouched
}

TEST(CalibrateCli, WrittenProfileKeepsEveryOtherField) {
  const std::string measurements = synthetic_measurements(profile_with({{"t_fix_us", 3.0}}));
  const std::string start = profile_with({});
  const std::string out = temp_path("fitted_fields.json");
  ASSERT_EQ(
      run_cli("calibrate --measurements " + measurements + " --gpu " + start + " --free t_fix_us --out " + out).code,
      0);
  nlohmann::json before = nlohmann::json::parse(read_file(start));
  nlohmann::json after = nlohmann::json::parse(read_file(out));
  before.erase("params");
  after.erase("params");
  // The fit adds its held-out error per kernel class (the band `predict` prints); nothing else changes.
  ASSERT_TRUE(after.contains("model_error"));
  EXPECT_EQ(after["model_error"]["asm-a8w8-qh16"]["rows"], 6);
  after.erase("model_error");
  before.erase("model_error");
  EXPECT_EQ(after, before);
}

TEST(CalibrateCli, StreamReadSweepFitsTheMemoryCurve) {
  // A sweep drawn from the curve itself (B = 3 TB/s, n = 3, 20 GB/s per workgroup alone) is fitted back.
  const std::string sweep = temp_path("stream_read.csv");
  {
    std::ofstream f(sweep);
    f << "gpu,kernel,clusters,wg_per_cluster,tbps\n";
    for (int wg : {1, 2, 4})
      for (int sms : {1, 8, 32, 64, 128, 256}) {
        const double d = 0.02 * wg * sms;
        f << "calibtest,stream_read," << sms << "," << wg << "," << d / std::cbrt(1.0 + std::pow(d / 3.0, 3.0)) << "\n";
      }
  }
  const std::string out = temp_path("curve.json");
  const CliResult r = run_cli("calibrate --gpu " + profile_with({}) + " --stream-read " + sweep + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("memory curve: B 3.000 TB/s, knee 3.00"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(out));
  EXPECT_NEAR(j["params"]["b_hbm_tbps"]["value"].get<double>(), 3.0, 1e-3);
  EXPECT_NEAR(j["params"]["bw_knee"]["value"].get<double>(), 3.0, 1e-2);
  EXPECT_EQ(j["params"]["bw_knee"]["kind"], "measured");
}

TEST(CalibrateCli, KernelParametersTransferWithoutTheMemoryCurve) {
  const std::string from =
      profile_with({{"t_fix_us", 3.0}, {"b_hbm_tbps", 4.0}, {"wgmma-fp8.t_pass_us", 9.0}, {"grid_block_us", 0.0}});
  const std::string out = temp_path("transferred.json");
  const CliResult r =
      run_cli("calibrate --gpu " + profile_with({}) + " --kernel-params-from " + from + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(j["params"]["t_fix_us"]["value"], 3.0);
  EXPECT_EQ(j["params"]["t_fix_us"]["kind"], "transferred");
  EXPECT_EQ(j["params"]["wgmma-fp8.t_pass_us"]["value"], 9.0);
  EXPECT_EQ(j["params"]["grid_block_us"]["value"], 0.0);  // a grid workgroup's fixed cost is the kernel's
  EXPECT_FALSE(j["params"].contains("b_hbm_tbps"));       // the memory is the target GPU's own
}

TEST(CalibrateCli, NothingToFitIsOneLineExitTwo) {
  const CliResult r = run_cli("calibrate --gpu " + profile_with({}));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("measurements"), std::string::npos) << r.err;
}

TEST(CalibrateCli, TextReportListsParametersAndMape) {
  const std::string measurements = synthetic_measurements(profile_with({{"t_fix_us", 3.0}}));
  const CliResult r = run_cli("calibrate --measurements " + measurements + " --gpu " + profile_with({}) +
                              " --free t_fix_us,reduce_block_us");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("calibration of calibtest (18 rows fitted, 6 held out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MAPE fitted rows"), std::string::npos) << r.out;
}

TEST(CalibrateCli, MissingFile) {
  expect_bad_input("calibrate --measurements /nonexistent.csv", "measurements: cannot read '/nonexistent.csv'");
}

TEST(CalibrateCli, NoRowsForTheGpu) {
  const std::string m = synthetic_measurements(profile_with({}));
  expect_bad_input("calibrate --measurements " + m + " --gpu mi300x", "measurements: no rows for GPU 'mi300x'");
}

TEST(CalibrateCli, UnknownFreeParameter) {
  const std::string m = synthetic_measurements(profile_with({}));
  expect_bad_input("calibrate --measurements " + m + " --gpu " + profile_with({}) + " --free t_fix_us,nope",
                   "free: 'nope' is not a fittable parameter");
}

TEST(CalibrateCli, BadCellNamesColumnAndLine) {
  const std::string path = temp_path("bad.csv");
  write_file(path,
             "gpu,kernel,policy,batch,context,heads,qo_len,q_dtype,kv_dtype,page_size,clusters,stage1_us,"
             "reduce_us,kernel_us,kv_bytes,kv_tbps,max_abs_err,driver,commit,date\n"
             "mi355x,k,aiter-v1,4,100000,16,1,fp8,fp8,1,0,,,abc,,,,d,c,x\n");
  expect_bad_input("calibrate --measurements " + path, "kernel_us: " + path + " line 2: must be empty or a number");
}

TEST(CalibrateCli, BadPolicyInARowNamesTheLine) {
  const std::string path = temp_path("bad_policy.csv");
  write_file(path,
             "gpu,kernel,policy,batch,context,heads,qo_len,q_dtype,kv_dtype,page_size,clusters,stage1_us,"
             "reduce_us,kernel_us,kv_bytes,kv_tbps,max_abs_err,driver,commit,date\n"
             "mi355x,k,nope,4,100000,16,1,fp8,fp8,1,0,,,50,,,,d,c,x\n");
  expect_bad_input("calibrate --measurements " + path, "policy: line 2: ");
}

TEST(CalibrateCli, FailedCalibrationWritesNoProfile) {
  const std::string out = temp_path("never.json");
  expect_bad_input("calibrate --measurements /nonexistent.csv --out " + out, "measurements: cannot read");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A refit replaces the parameters a profile's ratio error and edit error were measured with, so the written profile
// drops them (scripts/ratio_error_fit.py and scripts/edit_error_fit.py measure them again).
TEST(CalibrateCli, ARefitDropsTheRatioAndEditErrors) {
  const std::string measurements = synthetic_measurements(profile_with({{"t_fix_us", 3.0}}));
  const std::string start = profile_with({});
  nlohmann::json j = nlohmann::json::parse(read_file(start));
  j["ratio_error"] = {{"asm-a8w8-qh16", {{"median_pct", 1}, {"p90_pct", 3}, {"pairs", 10}, {"source", "test"}}}};
  j["edit_error"] = {{"fuse", {{"median_us", 0.3}, {"p90_us", 1.3}, {"edits", 10}, {"source", "test"}}}};
  write_file(start, j.dump(2));
  const std::string out = temp_path("fitted_ratio.json");
  ASSERT_EQ(
      run_cli("calibrate --measurements " + measurements + " --gpu " + start + " --free t_fix_us --out " + out).code,
      0);
  const nlohmann::json fitted = nlohmann::json::parse(read_file(out));
  EXPECT_FALSE(fitted.contains("ratio_error"));
  EXPECT_FALSE(fitted.contains("edit_error"));
}

// Speedup pairs per kernel class: the pairs of two policies on one workload whose two rows the class costs (here every
// row is of one class); the model's own times have no ratio error.
TEST(ReportCli, SpeedupPairsPerClassOfOneClassAreAllItsPairs) {
  const std::string profile = profile_with({{"t_fix_us", 3.0}});
  const CliResult r =
      run_cli("report --measurements " + synthetic_measurements(profile) + " --gpu " + profile + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["speedup_pairs"]["pairs"], 12);  // 12 workloads under two policies
  // Every synthetic row is of the one class the profile's auto rule picks at 16 heads: all 12 pairs are its.
  ASSERT_EQ(j["speedup_pairs_by_class"].size(), 1u);
  const auto one = j["speedup_pairs_by_class"].begin();
  EXPECT_EQ(one.key(), "asm-a8w8-qh16");
  EXPECT_EQ(one.value()["pairs"], 12);
  EXPECT_LT(one.value()["p90_abs_error_pct"].get<double>(), 1e-9);
}

TEST(ReportCli, EveryPublicRowOfTheGpuIsPredicted) {
  const CliResult r =
      run_cli("report --measurements " + std::string(MLASIM_DATA_DIR) +
              "/measurements/public/mi300x_aiter_asm_persistent_and_reduce.csv --gpu mi300x --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 11u);
  EXPECT_EQ(j["rows"][9]["target"], "reduce_us");
  EXPECT_EQ(j["rows"][9]["source"], "ROCm/aiter PR #3901 / commit bc54a24e3f message (FlyDSL MLA reduce for gfx942)");
}

}  // namespace
}  // namespace mlasim::cli_test
