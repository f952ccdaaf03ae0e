// mlasim sweep end to end: one row per configuration x policy, CSV and JSON, and no file at all on bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cli_runner.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::cli_test {
namespace {

// A sweep whose arguments are wrong must exit 2 and leave `out` as it was (here: absent).
void expect_no_file(const std::string& args, const std::string& message_start) {
  const std::string out = temp_path("bad_sweep.csv");
  expect_bad_input("sweep --quiet " + args + " --out " + out, message_start);
  EXPECT_FALSE(std::filesystem::exists(out)) << args;
}

TEST(SweepCli, OneCsvRowPerConfigurationAndPolicy) {
  const std::string out = temp_path("sweep.csv");
  const CliResult r = run_cli(
      "sweep --quiet --batch 1,4 --context 1000,20000,100000 --clusters 0,64 "
      "--gpu mi355x,mi300x --policy aiter-v1 --policy aiter-v1:max_split_per_batch=16 "
      "--out " +
      out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const auto lines = lines_of(read_file(out));
  ASSERT_EQ(lines.size(), 1u + 2 * 3 * 2 * 2 * 2);
  EXPECT_EQ(lines[0], "gpu,batch,context,clusters,policy," + sim::metrics_csv_header());
  EXPECT_EQ(lines[1].rfind("mi355x,1,1000,0,aiter-v1,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("mi355x,1,1000,0,aiter-v1:max_split_per_batch=16,", 0), 0u) << lines[2];
  EXPECT_EQ(lines.back().rfind("mi300x,4,100000,64,aiter-v1:max_split_per_batch=16,", 0), 0u) << lines.back();
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_GT(sim::metrics_from_csv(lines[0], lines[i]).kernel_us, 0.0);
}

// Several query tokens per request (MTP), dense and sparse: each row as predict gives it.
TEST(SweepCli, QueryTokensPerRequestSweepLikeAnyShape) {
  for (const std::string topk : {"", " --topk 2048"}) {
    const std::string out = temp_path("sweep_qlen.csv");
    const CliResult r = run_cli("sweep --quiet --gpu mi355x --batch 2 --context 4096 --qo-len 2 --policy aiter-v1" +
                                topk + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(read_file(out));
    ASSERT_EQ(lines.size(), 2u);
    const CliResult p =
        run_cli("predict --gpu mi355x --batch 2 --context 4096 --qo-len 2 --policy aiter-v1 --format csv" + topk);
    ASSERT_EQ(p.code, 0) << p.err;
    EXPECT_DOUBLE_EQ(sim::metrics_from_csv(lines[0], lines[1]).kernel_us,
                     sim::metrics_from_csv(lines_of(p.out)[0], lines_of(p.out)[1]).kernel_us);
  }
  // Per-request top-k lengths name one batch: the sweep's own message, whatever their count.
  expect_no_file("--batch 1 --context 100 --policy aiter-v1 --topk 2048 --topk-lens 5", "topk-lens: names one batch");
}

TEST(SweepCli, RowsMatchPredictForTheSameConfiguration) {
  const std::string out = temp_path("sweep_vs_predict.csv");
  ASSERT_EQ(run_cli("sweep --quiet --batch 3 --context 7000 --policy fixed:splits=4 --out " + out).code, 0);
  const auto lines = lines_of(read_file(out));
  const CliResult p = run_cli("predict --batch 3 --context 7000 --policy fixed:splits=4 --format json");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(sim::metrics_from_csv(lines[0], lines[1]), sim::metrics_from_json(nlohmann::json::parse(p.out)));
}

TEST(SweepCli, PolicyWithSeveralKnobsIsOneQuotedCell) {
  const std::string out = temp_path("sweep_knobs.csv");
  ASSERT_EQ(run_cli("sweep --quiet --batch 2 --context 5000 --policy fixed:splits=4,granule=32 --out " + out).code, 0);
  const auto lines = lines_of(read_file(out));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(validate::split_csv_record(lines[1], "sweep")[4], "fixed:granule=32,splits=4");
}

TEST(SweepCli, JsonIsAnArrayOfLabelledMetrics) {
  const std::string out = temp_path("sweep.json");
  const CliResult r = run_cli(
      "sweep --quiet --batch 1,2 --context 4096 --policy aiter-v1 --policy flashmla --format json --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(out));
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[1]["policy"], "flashmla");
  EXPECT_EQ(j[3]["batch"], 2);
  EXPECT_GT(sim::metrics_from_json(j[3]).kernel_us, 0.0);
}

TEST(SweepCli, ProgressAndRateOnStderr) {
  const std::string out = temp_path("sweep_progress.csv");
  const CliResult r = run_cli("sweep --batch 1 --context 100,200 --policy aiter-v1 --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("] 100% 2/2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 predictions in"), std::string::npos) << r.err;
}

TEST(SweepCli, FailedSweepLeavesAnOldFileAlone) {
  const std::string out = temp_path("sweep_keep.csv");
  write_file(out, "old\n");
  expect_bad_input("sweep --quiet --batch 1 --context 100 --policy nope --out " + out, "policy: unknown policy");
  EXPECT_EQ(read_file(out), "old\n");
}

TEST(SweepCli, EmptyListItem) {
  expect_no_file("--batch 1,,2 --context 100 --policy aiter-v1", "batch: must be a comma list");
}
TEST(SweepCli, TrailingComma) {
  expect_no_file("--batch 1 --context 100, --policy aiter-v1", "context: must be a comma list");
}
TEST(SweepCli, NotANumber) {
  expect_no_file("--batch 1 --context 1k --policy aiter-v1", "context: must be a comma list");
}
TEST(SweepCli, ZeroBatch) {
  expect_no_file("--batch 0 --context 100 --policy aiter-v1", "batch: must be a comma list of integers >= 1");
}
TEST(SweepCli, NegativeClusters) {
  expect_no_file("--batch 1 --context 100 --clusters -1 --policy aiter-v1",
                 "clusters: must be a comma list of integers >= 0");
}
TEST(SweepCli, ClustersBeyondOneOfTheGpus) {
  expect_no_file("--batch 1 --context 100 --clusters 300 --gpu mi300x,mi355x --policy aiter-v1",
                 "clusters: must be 0 (all) or 1..256 on mi355x, got 300");
}
TEST(SweepCli, UnknownGpuInList) {
  expect_no_file("--batch 1 --context 100 --gpu mi355x,nope --policy aiter-v1", "gpu: unknown GPU 'nope'");
}
TEST(SweepCli, EmptyGpuInList) {
  expect_no_file("--batch 1 --context 100 --gpu mi355x, --policy aiter-v1", "gpu: must be a comma list");
}
TEST(SweepCli, SecondPolicyBad) {
  expect_no_file("--batch 1 --context 100 --policy aiter-v1 --policy aiter-v1:max_split_per_batch=0",
                 "max_split_per_batch: must be");
}
TEST(SweepCli, UnsupportedHeads) { expect_no_file("--batch 1 --context 100 --heads 7 --policy aiter-v1", "heads"); }
TEST(SweepCli, BadFormat) {
  expect_no_file("--batch 1 --context 100 --policy aiter-v1 --format xml",
                 "format: must be text, json or csv, got 'xml'");
}
TEST(SweepCli, MissingOut) { expect_bad_input("sweep --batch 1 --context 100 --policy aiter-v1", "--out is required"); }
TEST(SweepCli, MissingPolicy) { expect_bad_input("sweep --batch 1 --context 100 --out x.csv", "--policy is required"); }

}  // namespace
}  // namespace mlasim::cli_test
