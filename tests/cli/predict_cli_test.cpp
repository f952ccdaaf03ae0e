// mlasim predict and compare end to end: formats, round trips, the speedup key, bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "mlasim/sim/metrics_format.h"

namespace mlasim::cli_test {
namespace {

const std::string kAtomArgs = "--gpu mi355x --batch 4 --context 100000 --heads 16 --q-dtype fp8 --kv-dtype fp8";

// The header and first data line of a CSV text.
std::pair<std::string, std::string> header_and_row(const std::string& csv, int row = 1) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  for (int i = 0; i < row; ++i) std::getline(in, line);
  return {header, line};
}

TEST(PredictCli, JsonCarriesEveryMetricAndTheConfiguration) {
  const CliResult r = run_cli("predict " + kAtomArgs + " --policy aiter-v1:max_split_per_batch=16 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const std::string& name : sim::metric_names()) EXPECT_TRUE(j.contains(name)) << name;
  EXPECT_EQ(j["gpu"], "mi355x");
  EXPECT_EQ(j["policy"], "aiter-v1:max_split_per_batch=16");
  EXPECT_EQ(j["batch"], 4);
  EXPECT_EQ(j["context"], 100000);
  EXPECT_EQ(j["active_clusters"], 64);
}

TEST(PredictCli, JsonAndCsvAgreeBitForBit) {
  const std::string args = "predict " + kAtomArgs + " --policy aiter-v1";
  const CliResult json = run_cli(args + " --format json");
  const CliResult csv = run_cli(args + " --format csv");
  ASSERT_EQ(json.code, 0) << json.err;
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto [header, row] = header_and_row(csv.out);
  EXPECT_EQ(sim::metrics_from_csv(header, row), sim::metrics_from_json(nlohmann::json::parse(json.out)));
}

TEST(PredictCli, CsvHasTheConfigurationColumnsFirst) {
  const CliResult r = run_cli("predict " + kAtomArgs + " --format csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(header_and_row(r.out).first, "gpu,batch,context,clusters,policy," + sim::metrics_csv_header());
  EXPECT_EQ(header_and_row(r.out).second.rfind("mi355x,4,100000,0,aiter-v1,", 0), 0u);
}

TEST(PredictCli, TextNamesWorkloadPolicyAndKernelTime) {
  const CliResult r = run_cli("predict " + kAtomArgs + " --policy aiter-v1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 x 100000 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("policy aiter-v1 (persistent kernel, kernel class asm-a8w8-qh16)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel_us"), std::string::npos) << r.out;
}

TEST(PredictCli, RaggedBatchIsLabelledRagged) {
  const CliResult r = run_cli("predict --kv-lens 3000,70000 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"], "ragged");
}

TEST(PredictCli, TimelineOnRequest) {
  const CliResult r = run_cli("predict --batch 2 --context 5000 --format json --timeline");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("timeline"));
}

TEST(PredictCli, UnknownPolicy) { expect_bad_input("predict --policy nope", "policy: unknown policy 'nope'"); }
TEST(PredictCli, UnknownKnob) {
  expect_bad_input("predict --policy aiter-v1:bogus=1", "policy: 'aiter-v1' has no knob");
}
TEST(PredictCli, KnobOutOfRange) {
  expect_bad_input("predict --policy aiter-v1:max_split_per_batch=0", "max_split_per_batch: must be");
}
TEST(PredictCli, BadFormat) {
  expect_bad_input("predict --format xml", "format: must be text, json or csv, got 'xml'");
}
TEST(PredictCli, BadKvList) { expect_bad_input("predict --kv-lens 10,,20", "kv-lens: must be a comma list"); }
TEST(PredictCli, ClustersOutOfRange) {
  expect_bad_input("predict --clusters 999", "clusters: must be 0 (all) or 1..256 on mi355x, got 999");
}

TEST(CompareCli, JsonCarriesSpeedupOfAOverB) {
  const CliResult r = run_cli("compare " + kAtomArgs +
                              " --policy aiter-v1:max_split_per_batch=16 --vs aiter-v1:max_split_per_batch=-1 "
                              "--format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("speedup"));
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), j["a"]["kernel_us"].get<double>() / j["b"]["kernel_us"].get<double>());
  EXPECT_EQ(j["a"]["active_clusters"], 64);
  EXPECT_EQ(j["b"]["active_clusters"], 256);
}

TEST(CompareCli, SamePolicyHasSpeedupOne) {
  const CliResult r = run_cli("compare " + kAtomArgs + " --policy aiter-v1 --vs aiter-v1 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["speedup"].get<double>(), 1.0);
}

TEST(CompareCli, CsvRowsReadBackAsTheJsonSides) {
  const std::string args = "compare " + kAtomArgs + " --policy aiter-v1:max_split_per_batch=16 --vs fixed:splits=8";
  const CliResult csv = run_cli(args + " --format csv");
  const CliResult json = run_cli(args + " --format json");
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto [header, row_a] = header_and_row(csv.out, 1);
  const auto row_b = header_and_row(csv.out, 2).second;
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "speedup");
  EXPECT_EQ(row_a.rfind("A,", 0), 0u);
  EXPECT_EQ(sim::metrics_from_csv(header, row_a), sim::metrics_from_json(j["a"]));
  EXPECT_EQ(sim::metrics_from_csv(header, row_b), sim::metrics_from_json(j["b"]));
}

TEST(CompareCli, TextShowsBothSidesAndTheSpeedup) {
  const CliResult r = run_cli("compare " + kAtomArgs + " --policy aiter-v1:max_split_per_batch=16 --vs aiter-v1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("aiter-v1:max_split_per_batch=16"), std::string::npos);
  EXPECT_NE(r.out.find("speedup (A kernel_us / B kernel_us): "), std::string::npos) << r.out;
}

TEST(CompareCli, OtherGpuForB) {
  const CliResult r = run_cli("compare --batch 8 --context 8000 --vs aiter-v1 --vs-gpu mi300x --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["b"]["gpu"], "mi300x");
}

TEST(CompareCli, MissingVs) {
  expect_bad_input("compare --policy aiter-v1", "vs: needs policy B (a spec), or a --scenario");
}
TEST(CompareCli, BadVs) { expect_bad_input("compare --vs fixed:splits=0", "splits: must be"); }
TEST(CompareCli, UnknownVsGpu) { expect_bad_input("compare --vs aiter-v1 --vs-gpu mi999", "gpu: unknown GPU 'mi999'"); }

}  // namespace
}  // namespace mlasim::cli_test
