// DeepSeek-V4's two scopes end to end: predict and compare with --dsv4, the rows each layer kind reads, a merged
// run's timeline, and scenario files with the scopes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kCsa = "--gpu mi355x --batch 16 --context 100000 --heads 16 --dsv4 csa";

double kv_bytes(const std::string& args) {
  const CliResult r = run_cli("predict " + args + " --format json");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["kv_bytes"].get<double>() : 0.0;
}

TEST(TwoScopesCli, PredictWorksForEverySparseCapablePolicyAndBothRuns) {
  for (const std::string run : {"one-pass", "merged"})
    for (const std::string spec : {"aiter-v1", "aiter-v1:max_split_per_batch=16", "aiter-v1-adaptive",
                                   "aiter-nonpersistent", "flashmla", "fixed:splits=4"}) {
      const CliResult r = run_cli("predict " + kCsa + " --scope-run " + run + " --policy " + spec + " --format json");
      ASSERT_EQ(r.code, 0) << spec << " " << run << ": " << r.err;
      EXPECT_GT(nlohmann::json::parse(r.out)["kernel_us"].get<double>(), 0) << spec << " " << run;
    }
  const CliResult text = run_cli("predict " + kCsa);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("DSv4 scopes: window 128 + compressed 1/4 (top 1024), one pass"), std::string::npos)
      << text.out;
}

TEST(TwoScopesCli, EachLayerKindReadsItsWindowAndCompressedRows) {
  // 16 tokens at position 99999: 128 window rows, plus 1024 (csa) or 781 (hca) compressed rows, 576 fp8 bytes each.
  EXPECT_DOUBLE_EQ(kv_bytes(kCsa), 16.0 * (128 + 1024) * 576);
  EXPECT_DOUBLE_EQ(kv_bytes("--gpu mi355x --batch 16 --context 100000 --heads 16 --dsv4 hca"),
                   16.0 * (128 + 781) * 576);
  EXPECT_DOUBLE_EQ(kv_bytes("--gpu mi355x --batch 16 --context 100000 --heads 16 --dsv4 swa"), 16.0 * 128 * 576);
  // The flags adjust a layer kind: a wider window, another indexer top-k.
  EXPECT_DOUBLE_EQ(kv_bytes(kCsa + " --window 256 --extra-topk 512"), 16.0 * (256 + 512) * 576);
  // Merged reads the same rows.
  EXPECT_DOUBLE_EQ(kv_bytes(kCsa + " --scope-run merged"), 16.0 * (128 + 1024) * 576);
}

TEST(TwoScopesCli, AMergedRunsTimelineEndsWithTheScopeMerge) {
  const CliResult r = run_cli("predict " + kCsa + " --scope-run merged --format json --timeline");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int merges = 0;
  double last_end = 0;
  for (const auto& box : j["timeline"]["reduce"]) {
    last_end = std::max(last_end, box["end_us"].get<double>());
    merges += box.value("scope_merge", false) ? 1 : 0;
  }
  EXPECT_GT(merges, 0);
  EXPECT_NEAR(last_end, j["kernel_us"].get<double>(), 1e-6);
}

TEST(TwoScopesCli, CompareTwoPoliciesOnAScopedWorkload) {
  const CliResult r = run_cli(
      "compare --gpu h100 --batch 64 --context 32768 --heads 128 --kv-dtype bf16 --q-dtype bf16 "
      "--dsv4 hca --policy aiter-v1 --vs flashmla --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["speedup"].get<double>(), 0);
}

TEST(TwoScopesCli, AScenarioCarriesTheScopes) {
  const std::string path = temp_path("dsv4_scenario.json");
  std::ofstream(path) << R"({"name": "dsv4", "workload": {"gpu": "mi355x",
      "batch": {"kind": "uniform", "count": 4, "context": 100000},
      "dsv4": {"window": 128, "compress_ratio": 4, "extra_topk": 1024, "run": "merged"}},
      "policies": {"A": "aiter-v1"}})";
  const CliResult r = run_cli("predict --scenario " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["kv_bytes"].get<double>(), 4.0 * (128 + 1024) * 576);
  // --dsv4 off turns the scenario's scopes off: dense again.
  EXPECT_DOUBLE_EQ(kv_bytes("--scenario " + path + " --dsv4 off"), 4.0 * 100000 * 576);
}

}  // namespace
}  // namespace mlasim::cli_test
