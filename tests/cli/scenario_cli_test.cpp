// --scenario FILE on plan, predict and compare: the file's workload and policies, with flags given beside it
// overriding its fields.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kAtom = MLASIM_DATA_DIR "/scenarios/atom_msb16_vs_auto.json";
const std::string kAtomFlags =
    "--gpu mi355x --batch 4 --context 100000 --heads 16 --q-dtype fp8 --kv-dtype fp8 --page-size 1";

TEST(ScenarioCli, CompareGivesTheSameSpeedupAsTheSameWorkloadByFlags) {
  const CliResult file = run_cli("compare --scenario " + kAtom + " --format json");
  const CliResult flags = run_cli("compare " + kAtomFlags +
                                  " --policy aiter-v1:max_split_per_batch=16 --vs aiter-v1:max_split_per_batch=-1"
                                  " --format json");
  ASSERT_EQ(file.code, 0) << file.err;
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(nlohmann::json::parse(file.out), nlohmann::json::parse(flags.out));
  EXPECT_GT(nlohmann::json::parse(file.out)["speedup"].get<double>(), 2.0);
}

TEST(ScenarioCli, PredictAndPlanTakePolicyA) {
  const CliResult file = run_cli("predict --scenario " + kAtom + " --format csv");
  const CliResult flags = run_cli("predict " + kAtomFlags + " --policy aiter-v1:max_split_per_batch=16 --format csv");
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_EQ(file.out, flags.out);
  const CliResult plan = run_cli("plan --scenario " + kAtom);
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("clusters used   64 of 256"), std::string::npos) << plan.out;
}

TEST(ScenarioCli, FlagsBesideTheFileOverrideItsFields) {
  const CliResult r = run_cli("predict --scenario " + kAtom + " --batch 8 --policy fixed:splits=2 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["context"], 100000);  // kept from the file
  EXPECT_EQ(j["policy"], "fixed:splits=2");
  const CliResult vs = run_cli("compare --scenario " + kAtom + " --vs flashmla --gpu mi300x --format json");
  ASSERT_EQ(vs.code, 0) << vs.err;
  const auto c = nlohmann::json::parse(vs.out);
  EXPECT_EQ(c["a"]["policy"], "aiter-v1:max_split_per_batch=16");
  EXPECT_EQ(c["b"]["policy"], "flashmla");
  EXPECT_EQ(c["a"]["gpu"], "mi300x");
}

TEST(ScenarioCli, ListedLengthsNeedAContextBesideABatch) {
  const std::string path = temp_path("listed.json");
  write_file(path,
             R"({"workload": {"batch": {"kind": "list", "kv_lens": [100, 2000]}}, "policies": {"A": "aiter-v1"}})");
  expect_bad_input("predict --scenario " + path + " --batch 3", "context: give --context with --batch");
  const CliResult r = run_cli("predict --scenario " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"], "ragged");
  std::remove(path.c_str());
}

TEST(ScenarioCli, BadFilesAreOneLine) {
  expect_bad_input("predict --scenario /nonexistent.json", "scenario: /nonexistent.json: cannot read");
  const std::string path = temp_path("bad.json");
  write_file(path, R"({"workload": {"heads": 0}, "policies": {"A": "aiter-v1"}})");
  expect_bad_input("compare --scenario " + path, "scenario: " + path + ": workload.heads: must be 1..1024, got 0");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace mlasim::cli_test

namespace mlasim::cli_test {
namespace {

TEST(ValidateCli, DryRunListsTheStandardCampaign) {
  const CliResult r = run_cli("validate --dry-run " MLASIM_DATA_DIR "/campaigns/standard.json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("campaign standard-v1: "), std::string::npos) << r.out;
  const CliResult j = run_cli("validate --dry-run --format json " MLASIM_DATA_DIR "/campaigns/standard.json");
  ASSERT_EQ(j.code, 0) << j.err;
  const auto parsed = nlohmann::json::parse(j.out);
  EXPECT_GE(parsed["configurations"].get<int>(), 1000);
  EXPECT_EQ(parsed["rows"].size(), parsed["configurations"].get<size_t>());
  EXPECT_GT(parsed["estimated_device_seconds"].get<double>(), 0);
}

TEST(ValidateCli, WithoutKernelsOrAGpuItSaysWhichAndWritesNothing) {
  const std::string out = temp_path("never.csv");
  const CliResult r = run_cli("validate " MLASIM_DATA_DIR "/campaigns/standard.json --out " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.err.rfind("mlasim: error: validate: this build has no GPU kernels", 0) == 0 ||
              r.err.rfind("mlasim: error: validate: no GPU found", 0) == 0)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ValidateCli, BadCampaignsAreOneLine) {
  expect_bad_input("validate /nonexistent.json --dry-run", "campaign: /nonexistent.json: cannot read");
  expect_bad_input("validate " MLASIM_DATA_DIR "/campaigns/standard.json --dry-run --gpu mi999", "gpu: unknown GPU");
}

TEST(ValidateCli, AProfileWithAParameterOutOfRangeIsTheCampaignsError) {
  // Not every configuration left out as one the policy cannot plan, and a run that measures nothing.
  nlohmann::json profile = nlohmann::json::parse(std::ifstream(MLASIM_DATA_DIR "/gpus/h100.json"));
  profile["params"]["reduce_blocks_per_cu"]["value"] = 99;
  const std::string gpu = temp_path("h100_bad.json");
  write_file(gpu, profile.dump());
  const std::string campaign = temp_path("campaign_bad_gpu.json");
  write_file(campaign, R"({"id": "bad-gpu", "gpu": ")" + gpu + R"(", "sampling": "list", "workloads": [{"gpu": ")" +
                           gpu +
                           R"(", "batch": {"kind": "uniform", "count": 4, "context": 2048}, "heads": 128}],
                           "policies": ["aiter-v1"]})");
  expect_bad_input("validate " + campaign + " --dry-run", "gpu.params.reduce_blocks_per_cu: ");
  std::remove(gpu.c_str());
  std::remove(campaign.c_str());
}

}  // namespace
}  // namespace mlasim::cli_test
