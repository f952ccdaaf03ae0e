// mlasim step end to end: every committed folder of validation traces gives its committed predictions
// (data/measurements/<gpu>/step*/predictions.json, written by scripts/step_table.py), the three output formats,
// and the edits applied in order.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

const std::string kStepDir = std::string(MLASIM_DATA_DIR) + "/measurements/h100/step/";
const std::string kStepWorkload =
    " --gpu h100 --batch 16 --context 4096 --heads 128 --q-dtype bf16 --kv-dtype bf16 --page-size 64 --policy aiter-v1";

nlohmann::json step_json(const std::string& args) {
  const CliResult r = run_cli("step " + args + " --format json");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// Every folder of validation traces (data/measurements/<gpu>/step*/): four runs of two rounds of three changes;
// 86 interleaved runs (15 on H100s, nine of them at other workloads, copy sizes or with a KV cache per layer; 71 on
// H200s, most at other workloads, copy sizes, with a KV cache per layer, at 16 heads or with the fp8 attention) of
// four changes and a mixed-batch change predicted with and without the steps' own batches (six predictions each;
// eight with steps of several contexts).
const std::vector<std::string>& step_folders() {
  static const std::vector<std::string> folders = {"h100/step",
                                                   "h100/step_copy8",
                                                   "h100/step_copy16",
                                                   "h100/step_copy32",
                                                   "h100/step_interleaved/run1",
                                                   "h100/step_interleaved/run2",
                                                   "h100/step_interleaved/lease2/run1",
                                                   "h100/step_interleaved/lease2/run2",
                                                   "h100/step_interleaved/lease3/run1",
                                                   "h100/step_interleaved/lease4/run1",
                                                   "h100/step_interleaved_b12_ctx8192",
                                                   "h100/step_interleaved_b24_ctx2048",
                                                   "h200/step_interleaved/b16_ctx4096",
                                                   "h200/step_interleaved/b16_ctx4096_run2",
                                                   "h200/step_interleaved/b12_ctx8192",
                                                   "h200/step_interleaved/b24_ctx2048",
                                                   "h100/step_kv_per_layer/b16_ctx4096",
                                                   "h100/step_kv_per_layer/b16_ctx4096_shared",
                                                   "h100/step_kv_per_layer/b24_ctx2048",
                                                   "h100/step_kv_per_layer/b12_ctx8192",
                                                   "h100/step_op_bytes/b16_ctx4096_copy8",
                                                   "h100/step_op_bytes/b16_ctx4096_copy32",
                                                   "h100/step_op_bytes/b24_ctx2048_copy8",
                                                   "h200/step_op_bytes/b16_ctx4096_copy8",
                                                   "h200/step_op_bytes/b16_ctx4096_copy32",
                                                   "h200/step_op_bytes/b24_ctx2048_copy8",
                                                   "h200/step_holdout/b8_ctx8192",
                                                   "h200/step_holdout/b20_ctx4096",
                                                   "h200/step_holdout/b32_ctx2048",
                                                   "h200/step_holdout2/b16_ctx4096_run3",
                                                   "h200/step_holdout2/b16_ctx4096_kv",
                                                   "h200/step_holdout2/b16_ctx8192",
                                                   "h200/step_holdout2/b8_ctx4096",
                                                   "h200/step_holdout2/b4_ctx16384",
                                                   "h200/step_repeat/b12_ctx8192",
                                                   "h200/step_repeat/b8_ctx8192",
                                                   "h200/step_heads/h16_b16_ctx4096",
                                                   "h200/step_heads/h16_b64_ctx4096",
                                                   "h200/step_heads/h16_b32_ctx8192",
                                                   "h200/step_heads/h16_b128_ctx2048",
                                                   "h200/step_writeback/h16_b96_ctx2048",
                                                   "h200/step_writeback/h16_b48_ctx4096",
                                                   "h200/step_writeback/h16_b24_ctx8192",
                                                   "h200/step_writeback/h16_b128_ctx4096",
                                                   "h200/step_gridfactor/h16_b32_ctx4096",
                                                   "h200/step_gridfactor/h16_b64_ctx2048",
                                                   "h200/step_gridfactor/h16_b40_ctx8192",
                                                   "h200/step_gridfactor/h16_b80_ctx4096",
                                                   "h200/step_secondkernel/b12_ctx4096",
                                                   "h200/step_secondkernel/b20_ctx8192",
                                                   "h200/step_secondkernel/b6_ctx16384",
                                                   "h200/step_secondkernel/h16_b56_ctx4096",
                                                   "h200/step_secondkernel/h16_b112_ctx2048",
                                                   "h200/step_secondkernel/h16_b48_ctx8192",
                                                   "h200/step_band/b10_ctx8192",
                                                   "h200/step_band/b14_ctx4096",
                                                   "h200/step_band/b28_ctx2048",
                                                   "h200/step_band/h16_b24_ctx4096",
                                                   "h200/step_band/h16_b72_ctx2048",
                                                   "h200/step_band/h16_b104_ctx4096",
                                                   "h200/step_contexts/b16_ctx4096",
                                                   "h200/step_contexts/b8_ctx8192",
                                                   "h200/step_contexts/h16_b48_ctx4096",
                                                   "h200/step_ragged/b16_ctx4096",
                                                   "h200/step_ragged/b12_ctx4096",
                                                   "h200/step_ragged/h16_b48_ctx4096",
                                                   "h200/step_edit_band/b24_ctx4096",
                                                   "h200/step_edit_band/b6_ctx8192",
                                                   "h200/step_edit_band/b40_ctx2048",
                                                   "h200/step_edit_band/h16_b40_ctx4096",
                                                   "h200/step_edit_band/h16_b88_ctx2048",
                                                   "h200/step_edit_band/h16_b64_ctx8192",
                                                   "h200/step_edit_band2/b12_ctx2048",
                                                   "h200/step_edit_band2/b32_ctx4096",
                                                   "h200/step_edit_band2/b10_ctx16384",
                                                   "h200/step_edit_band2/h16_b16_ctx8192",
                                                   "h200/step_edit_band2/h16_b56_ctx2048",
                                                   "h200/step_edit_band2/h16_b120_ctx4096",
                                                   "h200/step_fp8/b16_ctx4096",
                                                   "h200/step_fp8/b12_ctx8192",
                                                   "h200/step_fp8/b32_ctx2048",
                                                   "h200/step_fp8/h16_b32_ctx8192",
                                                   "h200/step_fp8/h16_b64_ctx4096",
                                                   "h200/step_fp8/h16_b128_ctx2048",
                                                   "h200/step_fp8_2/b12_ctx4096",
                                                   "h200/step_fp8_2/b24_ctx4096",
                                                   "h200/step_fp8_2/b48_ctx2048",
                                                   "h200/step_fp8_2/h16_b16_ctx4096",
                                                   "h200/step_fp8_2/h16_b48_ctx8192",
                                                   "h200/step_fp8_2/h16_b96_ctx2048",
                                                   "h200/step_fp8_3/b8_ctx16384",
                                                   "h200/step_fp8_3/b20_ctx8192",
                                                   "h200/step_fp8_3/b40_ctx4096",
                                                   "h200/step_fp8_3/h16_b24_ctx8192",
                                                   "h200/step_fp8_4/b64_ctx2048",
                                                   "h200/step_fp8_4/h16_b40_ctx8192",
                                                   "h200/step_fp8_4/h16_b56_ctx4096",
                                                   "h200/step_fp8_4/h16_b80_ctx4096",
                                                   "h200/step_fp8_4/h16_b112_ctx2048",
                                                   "h200/step_fp8_5/h16_b20_ctx8192",
                                                   "h200/step_fp8_5/h16_b32_ctx4096",
                                                   "h200/step_fp8_5/h16_b64_ctx2048",
                                                   "h200/step_fp8_5/h16_b72_ctx2048",
                                                   "h200/step_fp8_5/h16_b96_ctx4096",
                                                   "h200/step_bf16_floor/h16_b60_ctx8192",
                                                   "h200/step_bf16_floor/h16_b72_ctx4096",
                                                   "h200/step_bf16_floor/h16_b80_ctx2048",
                                                   "h200/step_bf16_floor/h16_b96_ctx4096",
                                                   "h200/step_bf16_floor/h16_b104_ctx2048",
                                                   "h200/step_classlaw/b36_ctx2048",
                                                   "h200/step_classlaw/b44_ctx2048",
                                                   "h200/step_classlaw/b56_ctx2048",
                                                   "h200/step_classlaw/b28_ctx4096",
                                                   "h200/step_copylaw/b48_ctx2048",
                                                   "h200/step_copylaw/b64_ctx2048",
                                                   "h200/step_copylaw/b40_ctx4096",
                                                   "h200/step_copylaw/b24_ctx8192",
                                                   "h200/step_copylaw/fp8_b56_ctx2048",
                                                   "h200/step_copylaw2/b52_ctx2048",
                                                   "h200/step_copylaw2/b36_ctx4096",
                                                   "h200/step_copylaw2/b44_ctx4096",
                                                   "h200/step_copylaw2/fp8_b40_ctx2048",
                                                   "h200/step_copylaw2/h16_fp8_b16_ctx2048",
                                                   "h200/step_fp8_carry/fp8_b16_ctx8192",
                                                   "h200/step_fp8_carry/fp8_b28_ctx4096",
                                                   "h200/step_fp8_carry/fp8_b36_ctx2048",
                                                   "h200/step_fp8_carry/fp8_b24_ctx8192",
                                                   "h200/step_fp8_carry/fp8_b52_ctx2048",
                                                   "h200/step_fuse_offset/b10_ctx6144",
                                                   "h200/step_fuse_offset/b30_ctx3072",
                                                   "h200/step_fuse_offset/b60_ctx3072",
                                                   "h200/step_fuse_offset/h16_b12_ctx12288",
                                                   "h200/step_fuse_offset/h16_b28_ctx6144",
                                                   "h200/step_fuse_offset/h16_b88_ctx3072",
                                                   "h200/step_fuse_offset/fp8_b14_ctx6144",
                                                   "h200/step_fuse_offset/fp8_b30_ctx6144",
                                                   "h200/step_fuse_offset/fp8_b44_ctx3072",
                                                   "h200/step_fuse_offset/fp8_h16_b12_ctx6144",
                                                   "h200/step_fuse_offset/fp8_h16_b26_ctx6144",
                                                   "h200/step_fuse_offset/fp8_h16_b76_ctx3072"};
  return folders;
}

// Each prediction of a folder, its before step and the measured after step, from the workload the prediction
// names. One test per folder, so the runs spread over ctest's jobs.
class CommittedStepPredictions : public ::testing::TestWithParam<std::string> {};

TEST_P(CommittedStepPredictions, TheTracesGiveThem) {
  const std::string folder = GetParam();
  const std::string dir = std::string(MLASIM_DATA_DIR) + "/measurements/" + folder + "/";
  std::ifstream in(dir + "predictions.json");
  ASSERT_TRUE(in) << dir;
  int checked = 0;
  for (const auto& p : nlohmann::json::parse(in)) {
    std::string workload;
    for (const auto& arg : p["workload"]) workload += " " + arg.get<std::string>();
    const std::string rules = p["rules"].is_null() ? "" : " --rules " + dir + p["rules"].get<std::string>();
    const std::string ops =
        p.value("op_bytes", std::string()).empty() ? "" : " --op-bytes " + dir + p["op_bytes"].get<std::string>();
    const std::string batches = p.value("step_batches", nlohmann::json()).is_null()
                                    ? ""
                                    : " --step-batches " + dir + p["step_batches"].get<std::string>();
    const nlohmann::json j = step_json("--trace " + dir + p["before_trace"].get<std::string>() + workload + rules +
                                       ops + batches + " --edit " + p["edit"].get<std::string>());
    EXPECT_NEAR(j["measured"]["step_us"].get<double>(), p["before_us"].get<double>(), 1e-6) << p["edit"];
    EXPECT_NEAR(j["edited"]["step_us"].get<double>(), p["predicted_us"].get<double>(), 1e-6) << p["change"];
    if (p.contains("band_us") && !p["band_us"].is_null())
      EXPECT_NEAR(j["band"]["half_width_us"].get<double>(), p["band_us"].get<double>(), 1e-6) << p["change"];
    else
      EXPECT_TRUE(j["band"].is_null() || j["band"]["half_width_us"].is_null()) << p["change"];
    const nlohmann::json after = step_json("--trace " + dir + p["after_trace"].get<std::string>() + workload);
    EXPECT_NEAR(after["measured"]["step_us"].get<double>(), p["measured_us"].get<double>(), 1e-6) << p["change"];
    ++checked;
  }
  // Runs with steps of several contexts (step_interleaved.py --mixed-contexts) predict that change twice more.
  EXPECT_EQ(checked, std::filesystem::exists(dir + "contexts_a.json.gz") ? 8 : 6);
}

INSTANTIATE_TEST_SUITE_P(StepCli, CommittedStepPredictions, ::testing::ValuesIn(step_folders()),
                         [](const ::testing::TestParamInfo<std::string>& folder) {
                           std::string name = folder.param;
                           for (char& c : name)
                             if (c == '/') c = '_';
                           return name;
                         });

// A folder of predictions committed without being listed above would go unchecked.
TEST(StepCli, EveryCommittedPredictionsFileIsChecked) {
  const std::filesystem::path root = std::filesystem::path(MLASIM_DATA_DIR) / "measurements";
  std::set<std::string> committed;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
    if (entry.path().filename() == "predictions.json")
      committed.insert(std::filesystem::relative(entry.path().parent_path(), root).generic_string());
  EXPECT_EQ(committed, std::set<std::string>(step_folders().begin(), step_folders().end()));
}

// Steps of one request count and three contexts: the launch grids cannot tell them apart, the run's step-batches
// file gives each its own, and the report says where the batches came from.
TEST(StepCli, StepBatchesGiveEachStepItsContextsAndTheReportSaysSo) {
  const std::string dir = std::string(MLASIM_DATA_DIR) + "/measurements/h200/step_contexts/b16_ctx4096/";
  const std::string args = "--trace " + dir +
                           "contexts_a.json.gz --gpu h200 --batch 16 --context 4096 --heads 128 --q-dtype bf16 "
                           "--kv-dtype bf16 --page-size 64 --edit policy=fixed:splits=4 --step-batches " +
                           dir + "step_batches_contexts_a.json";
  const nlohmann::json j = step_json(args);
  EXPECT_EQ(j["step_batches"], dir + "step_batches_contexts_a.json");
  EXPECT_EQ(j["step_batches_grid_disagree"], 0);  // the launch grids say 16 requests in every step, as the file does
  std::map<long long, int> tokens;
  for (const auto& s : j["steps"]) {
    EXPECT_EQ(s["requests"], 16);
    ++tokens[s["kv_tokens"].get<long long>()];
  }
  EXPECT_EQ(tokens, (std::map<long long, int>{{16 * 2048, 50}, {16 * 4096, 50}, {16 * 8192, 50}}));
  ASSERT_EQ(j["policy_changes"].size(), 3u);  // one per context
  std::set<std::string> batches;
  for (const auto& c : j["policy_changes"]) batches.insert(c["batch"].get<std::string>());
  EXPECT_EQ(batches.size(), 3u);
  const CliResult text = run_cli("step " + args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("batch   each step's own from " + dir +
                          "step_batches_contexts_a.json: 3 batches over 150 steps, 16 requests of 2048 to 8192 KV "
                          "tokens"),
            std::string::npos)
      << text.out;
}

TEST(StepCli, EachStepsBatchComesFromItsTraceAndTheReportSaysSo) {
  const std::string trace =
      std::string(MLASIM_DATA_DIR) + "/measurements/h100/step_interleaved/run1/mixed_a.json.gz" + kStepWorkload;
  const nlohmann::json j = step_json("--trace " + trace);
  EXPECT_EQ(j["batch_source"], "grid.x of /rope_kv_write_kernel/");
  EXPECT_EQ(j["steps_with_batch"], 150);
  std::map<int, int> requests;
  for (const auto& s : j["steps"]) {
    EXPECT_EQ(s["requests"], s["batch_from_count"]);
    ++requests[s["requests"].get<int>()];
  }
  EXPECT_EQ(requests, (std::map<int, int>{{8, 50}, {16, 50}, {32, 50}}));
  EXPECT_DOUBLE_EQ(j["tokens_per_step"].get<double>(), (8 + 16 + 32) / 3.0);
  const CliResult text = run_cli("step --trace " + trace + " --steps");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("batch   8 (50 steps), 16 (50 steps), 32 (50 steps); from grid.x of /rope_kv_write_kernel/ "
                          "in 150 of 150 steps"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("step  batch  measured_us"), std::string::npos) << text.out;
  const CliResult csv = run_cli("step --trace " + trace + " --format csv");
  EXPECT_NE(csv.out.find("\ntokens_per_step,"), std::string::npos) << csv.out;
}

// A policy edit's figures in JSON: one entry per batch the steps ran, each with its plans' kernel times, their
// ratio and the L2 carry-over the note gives (the H100 profile measured it).
TEST(StepCli, APolicyEditGivesItsFiguresPerBatchInJson) {
  const std::string trace =
      std::string(MLASIM_DATA_DIR) + "/measurements/h100/step_interleaved/run1/mixed_a.json.gz" + kStepWorkload;
  const nlohmann::json j = step_json("--trace " + trace + " --edit policy=fixed:splits=4");
  const nlohmann::json& changes = j["policy_changes"];
  ASSERT_EQ(changes.size(), 3u) << changes;
  std::vector<int> batches;
  for (const auto& c : changes) {
    batches.push_back(c["requests"].get<int>());
    EXPECT_EQ(c["edit"], "policy=fixed:splits=4");
    EXPECT_EQ(c["ran_policy"], "aiter-v1");
    EXPECT_EQ(c["next_policy"], "fixed:splits=4");
    EXPECT_GT(c["ran_us"].get<double>(), 0.0);
    EXPECT_NEAR(c["ratio"].get<double>(), c["next_us"].get<double>() / c["ran_us"].get<double>(), 1e-12);
    const nlohmann::json& l2 = c["l2_carry"];
    ASSERT_TRUE(l2.is_object()) << c;
    EXPECT_GE(l2["dirty_next_mb"].get<double>(), 0.0);
    EXPECT_NE(j["notes"][0].get<std::string>().find(
                  fmt::format("the next kernel {:+.2f} us", l2["next_kernel_us"].get<double>())),
              std::string::npos)
        << j["notes"][0];
  }
  EXPECT_EQ(batches, (std::vector<int>{8, 16, 32}));
  // Without a policy edit there are none.
  EXPECT_TRUE(step_json("--trace " + trace + " --edit remove=copy")["policy_changes"].empty());
}

// The edits' 90 % band: the H100 profile's ratio error of the 128-head class for a policy edit and its measured error
// per removed kernel for a removal, in JSON (the band around the edited step, each batch's figures) and in the text's
// band line, which names the edits whose errors are not in it.
TEST(StepCli, TheEditsBandInJsonAndText) {
  const std::string trace =
      std::string(MLASIM_DATA_DIR) + "/measurements/h100/step_interleaved/run1/mixed_a.json.gz" + kStepWorkload;
  const nlohmann::json j = step_json("--trace " + trace + " --edit policy=fixed:splits=4");
  const nlohmann::json e = nlohmann::json::parse(
      read_file(std::string(MLASIM_DATA_DIR) + "/gpus/h100.json"))["ratio_error"]["wgmma-bf16-pair"];
  const double p90 = e["p90_pct"].get<double>();
  for (const auto& c : j["policy_changes"]) {
    EXPECT_EQ(c["ratio_error"]["kernel_class"], "wgmma-bf16-pair");
    EXPECT_EQ(c["ratio_error"]["p90_pct"].get<double>(), p90);
    EXPECT_EQ(c["ratio_error"]["pairs"], e["pairs"]);
  }
  const double edited = j["edited"]["step_us"].get<double>(), half = j["band"]["half_width_us"].get<double>();
  EXPECT_GT(half, 0.0);
  // No more than the p90 of the whole step (the attention is part of it).
  EXPECT_LT(half, edited * p90 / 100);
  EXPECT_NEAR(j["band"]["low_us"].get<double>(), edited - half, 1e-9);
  EXPECT_NEAR(j["band"]["high_us"].get<double>(), edited + half, 1e-9);
  EXPECT_NE(j["band"]["basis"].get<std::string>().find("over sessions no fit took as input on h100 (wgmma-bf16-pair"),
            std::string::npos)
      << j["band"];
  const CliResult text = run_cli("step --trace " + trace + " --edit policy=fixed:splits=4");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find(fmt::format("band    step {:.2f} .. {:.2f} us", edited - half, edited + half)),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("; not in it:"), std::string::npos);
  EXPECT_FALSE(j["band"]["other_edits"].get<bool>());
  // A gap edit's error is not in it, and the band says so.
  const CliResult with_gaps = run_cli("step --trace " + trace + " --edit policy=fixed:splits=4 --edit gaps=0.5");
  EXPECT_NE(with_gaps.out.find("; not in it: gaps=0.5\n"), std::string::npos) << with_gaps.out;
  const nlohmann::json gaps = step_json("--trace " + trace + " --edit policy=fixed:splits=4 --edit gaps=0.5");
  EXPECT_TRUE(gaps["band"]["other_edits"].get<bool>());
  EXPECT_EQ(gaps["band"]["not_in_it"], nlohmann::json::array({"gaps=0.5"}));
  // With the ops' bytes, as its error was measured, a removal adds its kernels times the profile's p90 per removed
  // kernel (8 a step: one per layer), with or without a policy edit.
  const double remove_p90 = nlohmann::json::parse(read_file(std::string(MLASIM_DATA_DIR) +
                                                            "/gpus/h100.json"))["edit_error"]["remove"]["p90_us"]
                                .get<double>();
  const std::string ops =
      " --op-bytes " + std::string(MLASIM_DATA_DIR) + "/measurements/h100/step_interleaved/run1/op_bytes.json";
  const double policy_half =
      step_json("--trace " + trace + ops + " --edit policy=fixed:splits=4")["band"]["half_width_us"].get<double>();
  const nlohmann::json both = step_json("--trace " + trace + ops + " --edit policy=fixed:splits=4 --edit remove=copy");
  EXPECT_NEAR(both["band"]["half_width_us"].get<double>(), policy_half + 8 * remove_p90, 1e-9);
  EXPECT_FALSE(both["band"]["other_edits"].get<bool>());
  const nlohmann::json removal = step_json("--trace " + trace + ops + " --edit remove=copy");
  EXPECT_NEAR(removal["band"]["half_width_us"].get<double>(), 8 * remove_p90, 1e-9);
  EXPECT_NE(removal["band"]["basis"].get<std::string>().find("the fuse and remove edits within the p90"),
            std::string::npos)
      << removal["band"];
  // Without them the removal's error is not the measured one: the policy edit's band alone, the removal named.
  const nlohmann::json bare = step_json("--trace " + trace + " --edit policy=fixed:splits=4 --edit remove=copy");
  EXPECT_NEAR(bare["band"]["half_width_us"].get<double>(), half, 1e-9);
  EXPECT_EQ(bare["band"]["not_in_it"],
            nlohmann::json::array({"the remove edits (their error was measured with the ops' bytes given "
                                   "(--op-bytes), which weigh the attention after)"}));
  // A gap edit alone has no band and no basis.
  EXPECT_TRUE(step_json("--trace " + trace + " --edit gaps=0.5")["band"].is_null());
}

// The measured steps' spread: its mean's interval in JSON, text and CSV, and whether traces as long tell the
// predicted change to +-5 % (the H100's interleaved run: 50 steps of one batch; its mixed trace three batches).
TEST(StepCli, TheSpreadSaysHowPreciselyTheTraceMeasuresAChange) {
  const std::string trace =
      std::string(MLASIM_DATA_DIR) + "/measurements/h100/step_interleaved/run1/before.json.gz" + kStepWorkload;
  const nlohmann::json j = step_json("--trace " + trace + " --edit policy=fixed:splits=4");
  const nlohmann::json& s = j["spread"];
  double sum = 0, squares = 0;
  for (const auto& step : j["steps"]) sum += step["measured_us"].get<double>();
  const double n = static_cast<double>(j["steps"].size()), mean = sum / n;
  for (const auto& step : j["steps"]) squares += std::pow(step["measured_us"].get<double>() - mean, 2);
  EXPECT_EQ(s["steps"], j["steps"].size());
  EXPECT_EQ(s["batches"], 1);
  EXPECT_NEAR(s["sd_us"].get<double>(), std::sqrt(squares / (n - 1)), 1e-6);
  EXPECT_NEAR(s["mean_ci95_us"].get<double>(), 1.96 * s["sd_us"].get<double>() / std::sqrt(n), 1e-6);
  // A change of some 40 % is told to +-5 % by as many steps again.
  EXPECT_TRUE(s["steps_to_confirm_5pct"].get<long long>() <= s["steps"].get<long long>()) << s;
  const CliResult text = run_cli("step --trace " + trace + " --edit policy=fixed:splits=4");
  EXPECT_NE(text.out.find(fmt::format("spread  a step's sd {:.2f} us about its batch's mean ({} steps, 1 batch)",
                                      s["sd_us"].get<double>(), s["steps"].get<int>())),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("(95 %, at this trace's spread): enough\n"), std::string::npos) << text.out;
  // No edit: the spread, and nothing to confirm.
  const CliResult bare = run_cli("step --trace " + trace);
  EXPECT_NE(bare.out.find("spread  "), std::string::npos);
  EXPECT_EQ(bare.out.find("confirm "), std::string::npos);
  EXPECT_TRUE(step_json("--trace " + trace)["spread"]["steps_to_confirm_5pct"].is_null());
  EXPECT_NE(run_cli("step --trace " + trace + " --format csv")
                .out.find(fmt::format("step_mean_ci95_us,{},\n", s["mean_ci95_us"].get<double>())),
            std::string::npos);
  // A mixed trace: each batch about its own mean.
  const nlohmann::json mixed = step_json("--trace " + std::string(MLASIM_DATA_DIR) +
                                         "/measurements/h100/step_interleaved/run1/mixed_a.json.gz" + kStepWorkload);
  EXPECT_EQ(mixed["spread"]["batches"], 3);
  EXPECT_LT(mixed["spread"]["sd_us"].get<double>(), 0.05 * mixed["measured"]["step_us"].get<double>());
  // A change finer than the trace resolves asks for more steps (a gap edit of 0.001 us a gap).
  const CliResult fine = run_cli(
      "step --trace " + trace + " --edit gaps=" +
      fmt::format("{}", j["measured"]["gaps_us"].get<double>() / (j["measured"]["kernels"].get<double>() - 1) + 0.001));
  EXPECT_NE(fine.out.find("take at least "), std::string::npos) << fine.out;
}

TEST(StepCli, TheTraceReadsAsEightLayersOfOurStack) {
  const nlohmann::json j = step_json("--trace " + kStepDir + "before_r1.json.gz" + kStepWorkload);
  EXPECT_EQ(j["split"], "markers");
  EXPECT_EQ(j["total_steps"], 20);
  EXPECT_DOUBLE_EQ(j["measured"]["layers"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(j["measured"]["kernels"].get<double>(), 80);
  EXPECT_EQ(j["measured"]["class_us"]["other"].get<double>() > 0, true);
  EXPECT_DOUBLE_EQ(j["tokens_per_step"].get<double>(), 16);
  // Text and CSV carry the same step.
  const CliResult text =
      run_cli("step --trace " + kStepDir + "before_r1.json.gz" + kStepWorkload + " --edit remove=copy");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("uplift"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("remove=copy: 8 kernels per step removed"), std::string::npos) << text.out;
  // Without the ops' bytes a removed op's effect on the kernels after it is not predicted, and the line says so.
  EXPECT_NE(text.out.find("removed; the kernels after keep their measured times (the ops' bytes are not given "
                          "(--op-bytes)"),
            std::string::npos)
      << text.out;
  // With them, each layer's stage 1 takes the change of what the ops before it wrote and read into L2.
  const CliResult ops = run_cli("step --trace " + kStepDir + "before_r1.json.gz" + kStepWorkload +
                                " --edit remove=copy --op-bytes " + kStepDir + "op_bytes.json");
  ASSERT_EQ(ops.code, 0) << ops.err;
  EXPECT_NE(ops.out.find("removed; the 8 stage-1 kernels per step after them -0.55 us each"), std::string::npos)
      << ops.out;
  EXPECT_NE(ops.out.find("the other kernels after keep their measured times"), std::string::npos) << ops.out;
  const CliResult csv = run_cli("step --trace " + kStepDir + "before_r1.json.gz" + kStepWorkload + " --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("metric,measured,edited\nstep_us,", 0), 0u) << csv.out;
}

// The policy that ran: --policy, else the scenario's policy A, as the explorer's Step tab takes it.
TEST(StepCli, TheScenariosPolicyAIsThePolicyThatRan) {
  nlohmann::json scenario =
      nlohmann::json::parse(read_file(std::string(MLASIM_DATA_DIR) + "/scenarios/h100_decode_step_split.json"));
  scenario["policies"]["A"] = "fixed:splits=4";
  const std::string path = temp_path("step_scenario_a.json");
  write_file(path, scenario.dump());
  const std::string trace = " --trace " + kStepDir + "policy_r1.json.gz --scenario " + path;
  nlohmann::json j = step_json(trace);
  EXPECT_EQ(j["policy"], "fixed:splits=4");
  EXPECT_EQ(j["metadata_build"]["policy"], "fixed:splits=4");
  // Back to aiter-v1 from the policy that ran: the reduce kernels go.
  j = step_json(trace + " --edit policy=aiter-v1");
  EXPECT_DOUBLE_EQ(j["edited"]["class_us"]["mla_reduce"].get<double>(), 0.0);
  EXPECT_GT(j["measured"]["class_us"]["mla_reduce"].get<double>(), 0.0);
  // --policy still names it when given.
  EXPECT_EQ(step_json(trace + " --policy aiter-v1")["policy"], "aiter-v1");
}

TEST(StepCli, EditsApplyInOrder) {
  const std::string base = "--trace " + kStepDir + "before_r1.json.gz" + kStepWorkload;
  const double both = step_json(base + " --edit remove=copy --edit gaps=0")["edited"]["step_us"].get<double>();
  const nlohmann::json gapless = step_json(base + " --edit gaps=0 --edit remove=copy");
  EXPECT_NEAR(both, gapless["edited"]["step_us"].get<double>(), 1e-9);
  EXPECT_DOUBLE_EQ(gapless["edited"]["gaps_us"].get<double>(), 0);
  EXPECT_EQ(gapless["notes"].size(), 2u);
}

}  // namespace
}  // namespace mlasim::cli_test
