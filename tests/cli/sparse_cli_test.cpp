// Sparse (top-k) decode end to end: predict and compare for every sparse-capable policy, scenario files with a
// top-k, and mlasim buffers with its fit check.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kSparse = "--gpu mi355x --batch 16 --context 100000 --heads 16 --topk 2048";

TEST(SparseCli, PredictWorksForEverySparseCapablePolicy) {
  for (const std::string spec : {"aiter-v1", "aiter-v1:max_split_per_batch=16", "aiter-v1-adaptive",
                                 "aiter-nonpersistent", "flashmla", "fixed:splits=4"}) {
    const CliResult r = run_cli("predict " + kSparse + " --policy " + spec + " --format json");
    ASSERT_EQ(r.code, 0) << spec << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["kernel_us"].get<double>(), 0) << spec;
  }
  const CliResult text = run_cli("predict " + kSparse);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("top-k 2048"), std::string::npos) << text.out;
}

TEST(SparseCli, TheSparseBatchReadsItsTopkRowsNotItsContext) {
  const auto kv_bytes = [](const std::string& args) {
    const CliResult r = run_cli("predict " + args + " --format json");
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["kv_bytes"].get<double>();
  };
  // 16 tokens x 2048 rows x 576 fp8 bytes, against 16 x 100000 rows dense.
  EXPECT_DOUBLE_EQ(kv_bytes(kSparse), 16.0 * 2048 * 576);
  EXPECT_DOUBLE_EQ(kv_bytes("--gpu mi355x --batch 16 --context 100000 --heads 16"), 16.0 * 100000 * 576);
}

TEST(SparseCli, CompareTwoSparsePolicies) {
  const CliResult r = run_cli(
      "compare --gpu h100 --batch 4 --context 8192 --heads 128 --kv-dtype bf16 --q-dtype bf16 "
      "--topk 2048 --policy aiter-v1 --vs flashmla --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("speedup"));
}

TEST(SparseCli, AScenarioCarriesTheTopk) {
  const std::string path = temp_path("sparse_scenario.json");
  std::ofstream(path) << R"({"name": "sparse", "workload": {"gpu": "mi355x",
      "batch": {"kind": "uniform", "count": 4, "context": 100000}, "topk": 2048, "topk_lens": [2048, 1024, 512, 2048]},
      "policies": {"A": "aiter-v1"}})";
  const CliResult r = run_cli("predict --scenario " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["kv_bytes"].get<double>(), (2048.0 + 1024 + 512 + 2048) * 576);
}

TEST(SparseCli, BuffersPrintsGetMlaMetadataInfoSizesAndChecksTheBatch) {
  const CliResult r = run_cli(
      "buffers --gpu mi355x --batch 4 --context 100000 --topk 2048 --max-batch 256 --fit "
      "--format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_TRUE(j[0]["fits"].get<bool>());
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : j[0]["buffers"]) by_name[b["name"]] = b;
  EXPECT_EQ(by_name["work_info_set"]["shape"], nlohmann::json::parse("[511, 8]"));
  EXPECT_EQ(by_name["work_info_set"]["used_rows"], 172);
  EXPECT_EQ(by_name["kv_indices"]["shape"], nlohmann::json::parse("[524288]"));
  const CliResult text = run_cli("buffers --gpu mi355x --batch 4 --context 100000 --topk 2048 --max-batch 256");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("reduce_partial_map"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace mlasim::cli_test
