// The mlasim binary end to end: output of `plan`, exit code 2 and one line for bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace {

using mlasim::cli_test::expect_bad_input;
using mlasim::cli_test::run_cli;
using mlasim::cli_test::temp_path;
using mlasim::cli_test::write_file;

TEST(PlanCli, TextSummaryOfTheReadmeExample) {
  const auto r = run_cli("plan --gpu mi355x --batch 4 --context 100000 --policy aiter-v1:max_split_per_batch=16");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("clusters used   64 of 256 (25.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("works           67"), std::string::npos);
  EXPECT_NE(r.out.find("splits/request  16,17,17,17"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("64-255"), std::string::npos);
}

TEST(PlanCli, JsonHasTheReferenceLayout) {
  const auto r = run_cli("plan --batch 4 --context 100000 --policy aiter-v1:max_split_per_batch=-1 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outputs"]["num_works"], 259);
  EXPECT_EQ(j["outputs"]["reduce_indptr"], nlohmann::json({0, 64, 129, 194, 259}));
  EXPECT_EQ(j["derived"]["num_clusters"], 256);
  EXPECT_EQ(j["buffer_sizes"]["work_info_set"], nlohmann::json({259, 8}));
}

TEST(PlanCli, CasesFileReproducesEveryReferenceCase) {
  const std::string path = MLASIM_TEST_DATA_DIR "/aiter_v1_golden_sample.jsonl";
  const auto r = run_cli("plan --cases " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream gold(path);
  std::istringstream got(r.out);
  std::string g, o;
  int n = 0;
  while (std::getline(gold, g)) {
    ASSERT_TRUE(std::getline(got, o));
    const auto want = nlohmann::json::parse(g), have = nlohmann::json::parse(o);
    EXPECT_EQ(have["id"], want["id"]);
    for (const char* k : {"derived", "model", "buffer_sizes", "outputs"}) EXPECT_EQ(have[k], want[k]) << want["id"];
    ++n;
  }
  EXPECT_EQ(n, 226);
}

TEST(PlanCli, BadInputIsOneLineAndExitCodeTwo) {
  expect_bad_input("plan --policy aiter-v1:max_split_per_batch=0",
                   "max_split_per_batch: must be -1, vllm or 1..4096, got 0");
  expect_bad_input("plan --heads 24", "heads: 24 q heads are not supported on gfx950");
  expect_bad_input("plan --heads 12", "heads: must be a positive multiple of 8, got 12");
  expect_bad_input("plan --context 0", "context: must be >= 1 token, got 0");
  expect_bad_input("plan --batch -3", "batch: must be >= 1, got -3");
  expect_bad_input("plan --kv-lens 100,-5", "kv-lens: must be a comma list of integers >= 1, got '-5'");
  expect_bad_input("plan --kv-lens 100,,5", "kv-lens: must be a comma list of integers >= 1, got ''");
  expect_bad_input("plan --page-size 3", "page_size: must be a power of two");
  expect_bad_input("plan --kv-granularity 24", "kv_granularity: must be a power of two");
  expect_bad_input("plan --gpu mi999", "gpu: unknown GPU 'mi999'; known: h100, h200");
  expect_bad_input("plan --policy flashy", "policy: unknown policy 'flashy'");
  expect_bad_input("plan --q-dtype fp4", "q-dtype: must be fp8 or bf16, got 'fp4'");
  expect_bad_input("plan --format xml", "format: must be text, json, got 'xml'");
  expect_bad_input("plan --clusters 999", "clusters: must be 0 (all) or 1..256 on mi355x, got 999");
  expect_bad_input("plan --no-such-flag", "The following argument was not expected: --no-such-flag");
}

TEST(PlanCli, MalformedCaseLinesNameTheLine) {
  const std::string bad1 = temp_path("bad1.jsonl"), bad2 = temp_path("bad2.jsonl"), bad3 = temp_path("bad3.jsonl");
  write_file(bad1, "{\"inputs\": {\"arch\": \"gfx950\"}}\n");
  expect_bad_input("plan --cases " + bad1 + " --format json", "cases: line 1: inputs.num_cu: is missing");
  write_file(bad2, "\n{not json\n");
  expect_bad_input("plan --cases " + bad2 + " --format json", "cases: line 2: not valid JSON");
  write_file(
      bad3,
      R"({"inputs": {"arch":"gfx950","num_cu":256,"q_dtype":"fp8","num_heads_per_head_k":16,"max_split_per_batch":0,"seqlens_kv":[100]}})"
      "\n");
  expect_bad_input("plan --cases " + bad3 + " --format json",
                   "cases: line 1: max_split_per_batch: must be -1 (auto) or >= 1, got 0");
  expect_bad_input("plan --cases /nonexistent.jsonl", "cases: cannot read '/nonexistent.jsonl'");
}

}  // namespace
