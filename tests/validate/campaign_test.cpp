// Campaign files: sampling, stable ids, the KV-size and planning filters, and errors that name the field.
#include "mlasim/validate/campaign.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;
using nlohmann::json;

Campaign from(const std::string& text) { return campaign_from_json(json::parse(text)); }

std::string message_of(const std::string& text) {
  const auto e = input_error_of([&] { expand_campaign(from(text)); });
  return e ? e->what() : std::string();
}

TEST(Campaign, GridIsTheFullProductUnderEveryPolicy) {
  const CampaignPlan plan = expand_campaign(from(R"({"id": "g", "axes": {"batch": [1, 4], "context": [1000, 5000],
      "kv_dtype": ["bf16", "fp8"]}, "policies": ["aiter-v1", "flashmla"]})"));
  EXPECT_EQ(plan.configs.size(), 2u * 2 * 2 * 2);
  std::set<std::string> ids;
  for (const CampaignConfig& c : plan.configs) ids.insert(c.id);
  EXPECT_EQ(ids.size(), plan.configs.size());
  // Every policy runs on each workload, in a row (so a run makes a workload's inputs once).
  EXPECT_EQ(plan.configs[0].workload, plan.configs[1].workload);
  EXPECT_EQ(plan.configs[0].policy, "aiter-v1");
  EXPECT_EQ(plan.configs[1].policy, "flashmla");
}

TEST(Campaign, IdsAreStableAndNameTheConfiguration) {
  sim::Workload w;
  w.gpu = "h100";
  w.batch = sim::BatchSpec::uniform(4, 4096);
  // Pinned: ids join rows of different runs and files, so they must never change for the same configuration.
  EXPECT_EQ(config_id(w, "aiter-v1:max_split_per_batch=16"), config_id(w, " aiter-v1 : max_split_per_batch = 16"));
  EXPECT_EQ(config_id(w, "aiter-v1"), "c" + config_id(w, "aiter-v1").substr(1));
  EXPECT_EQ(config_id(w, "aiter-v1").size(), 17u);
  EXPECT_NE(config_id(w, "aiter-v1"), config_id(w, "flashmla"));
  w.page_size = 64;
  EXPECT_NE(config_id(w, "aiter-v1"), config_id(sim::Workload{}, "aiter-v1"));
}

TEST(Campaign, LatinHypercubeUsesEveryStratumOnce) {
  const std::string text = R"({"id": "l", "sampling": "latin-hypercube", "samples": 64,
      "seed": 3, "axes": {"batch": {"log_range": [1, 256]}, "context": {"log_range": [64, 131072]},
      "qlen": [1, 2, 3, 4, 5, 6, 7, 8], "heads": [16, 128]}, "policies": ["aiter-v1"], "max_kv_bytes": 1e13})";
  const CampaignPlan plan = expand_campaign(from(text));
  ASSERT_EQ(plan.configs.size(), 64u);
  // A list axis of 8 values: each value is drawn exactly 8 times in 64 samples (a random draw would rarely be).
  std::map<int, int> per_qlen, per_heads;
  int min_batch = 256, max_batch = 1;
  for (const CampaignConfig& c : plan.configs) {
    ++per_qlen[c.workload.qlen];
    ++per_heads[c.workload.heads];
    min_batch = std::min(min_batch, c.workload.batch.count);
    max_batch = std::max(max_batch, c.workload.batch.count);
  }
  EXPECT_EQ(per_qlen.size(), 8u);
  for (const auto& [qlen, count] : per_qlen) EXPECT_EQ(count, 8) << "qlen " << qlen;
  EXPECT_EQ(per_heads[16], 32);
  // The log range is covered end to end: one sample in each of its lowest and highest 64ths of log space.
  EXPECT_LE(min_batch, 2);
  EXPECT_GE(max_batch, 128);
  // The same seed gives the same campaign.
  const CampaignPlan again = expand_campaign(from(text));
  ASSERT_EQ(again.configs.size(), plan.configs.size());
  for (size_t i = 0; i < plan.configs.size(); ++i) EXPECT_EQ(again.configs[i].id, plan.configs[i].id);
}

TEST(Campaign, RaggedSpreadMakesListedLengthsAroundTheContext) {
  const CampaignPlan plan = expand_campaign(from(R"({"id": "r", "axes": {"batch": [64], "context": [4096],
      "spread": [1.0]}, "policies": ["aiter-v1"]})"));
  ASSERT_EQ(plan.configs.size(), 1u);
  const std::vector<int> lens = plan.configs[0].workload.batch.lengths();
  EXPECT_EQ(lens.size(), 64u);
  EXPECT_NE(*std::min_element(lens.begin(), lens.end()), *std::max_element(lens.begin(), lens.end()));
}

TEST(Campaign, FiltersLeaveOutOversizedAndUnplannableConfigurations) {
  const CampaignPlan plan = expand_campaign(from(R"({"id": "f", "axes": {"batch": [1, 256], "context": [131072],
      "page_size": [1, 64]}, "policies": ["aiter-v1", "flashinfer-mla"], "max_kv_bytes": 1e9})"));
  // 256 x 131072 tokens are over 1e9 bytes; flashinfer-mla plans page size 1 only.
  EXPECT_EQ(plan.left_out_kv, 4);
  EXPECT_EQ(plan.left_out_unplannable, 1);
  EXPECT_EQ(plan.configs.size(), 3u);
  ASSERT_EQ(plan.left_out_reasons.size(), 1u);
  EXPECT_NE(plan.left_out_reasons[0].find("page_size"), std::string::npos);
}

TEST(Campaign, ExplicitListRunsEachWorkloadUnderEveryPolicy) {
  const CampaignPlan plan = expand_campaign(from(R"({"id": "x", "sampling": "list", "gpu": "h200",
      "workloads": [{"batch": {"kind": "list", "kv_lens": [100, 5000]}}, {"heads": 128}],
      "policies": ["aiter-v1", "fixed:splits=2"]})"));
  ASSERT_EQ(plan.configs.size(), 4u);
  EXPECT_EQ(plan.configs[0].workload.gpu, "h200");
  EXPECT_EQ(plan.configs[3].workload.heads, 128);
}

TEST(Campaign, ErrorsNameTheField) {
  EXPECT_EQ(message_of(R"({"policies": ["aiter-v1"]})"), "id: must name the campaign, e.g. standard-v1");
  EXPECT_EQ(message_of(R"({"id": "a"})"), "policies: is missing; give a list of policy specs");
  EXPECT_EQ(message_of(R"({"id": "a", "policies": ["nope"]})").rfind("policy: unknown policy 'nope'", 0), 0u);
  EXPECT_EQ(message_of(R"({"id": "a", "sampling": "sobol", "policies": ["aiter-v1"]})"),
            "sampling: must be grid, random, latin-hypercube or list, got 'sobol'");
  EXPECT_EQ(message_of(R"({"id": "a", "sampling": "random", "policies": ["aiter-v1"]})"),
            "samples: is needed for random sampling");
  EXPECT_EQ(message_of(R"({"id": "a", "axes": {"batch": {"log_range": [1, 8]}}, "policies": ["aiter-v1"]})"),
            "axes: grid sampling needs a list of values on every axis, not a log_range");
  EXPECT_EQ(message_of(R"({"id": "a", "axes": {"batch": [0]}, "policies": ["aiter-v1"]})"),
            "axes.batch: entry 0 must be an integer 1..65536, got 0");
  EXPECT_EQ(message_of(R"({"id": "a", "axes": {"heads": {"log_range": [8, 2]}}, "policies": ["aiter-v1"]})"),
            "axes.heads.log_range: must be [min, max] with min <= max");
  EXPECT_EQ(
      message_of(R"({"id": "a", "axes": {"kv_dtype": ["fp4"]}, "policies": ["aiter-v1"]})").rfind("axes.kv_dtype", 0),
      0u);
  EXPECT_EQ(message_of(R"({"id": "a", "axes": {"spread": [-1]}, "policies": ["aiter-v1"]})"),
            "axes.spread: must be a list of sigmas in [0, 4], got -1");
  EXPECT_EQ(message_of(R"({"id": "a", "repetition": 3, "policies": ["aiter-v1"]})")
                .rfind("repetition: is not a campaign field here", 0),
            0u);
  EXPECT_EQ(message_of(R"({"id": "a", "decode": "fast", "policies": ["aiter-v1"]})"),
            "decode: must be auto, portable or wgmma, got 'fast'");
}

TEST(Campaign, TheStandardCampaignIsBigEnoughAndSpansTheSpace) {
  const Campaign c = load_campaign(MLASIM_DATA_DIR "/campaigns/standard.json");
  const CampaignPlan plan = expand_campaign(c);
  EXPECT_GE(plan.configs.size(), 1000u);
  std::set<std::string> policies;
  std::set<int> heads, qlens, pages, clusters;
  std::set<DType> dtypes;
  int min_batch = 1 << 30, max_batch = 0, min_context = 1 << 30, max_context = 0, ragged = 0;
  for (const CampaignConfig& config : plan.configs) {
    const sim::Workload& w = config.workload;
    policies.insert(config.policy.substr(0, config.policy.find(':')));
    heads.insert(w.heads);
    qlens.insert(w.qlen);
    pages.insert(w.page_size);
    clusters.insert(w.clusters);
    dtypes.insert(w.kv_dtype);
    const std::vector<int> lens = w.batch.lengths();
    min_batch = std::min(min_batch, static_cast<int>(lens.size()));
    max_batch = std::max(max_batch, static_cast<int>(lens.size()));
    for (int l : lens) {
      min_context = std::min(min_context, l);
      max_context = std::max(max_context, l);
    }
    ragged += w.batch.kind != sim::BatchSpec::Kind::uniform;
  }
  EXPECT_EQ(policies.size(), 7u);  // every registered policy
  EXPECT_EQ(heads, (std::set<int>{16, 32, 64, 128}));
  EXPECT_EQ(qlens, (std::set<int>{1, 2, 3, 4}));
  EXPECT_EQ(pages, (std::set<int>{1, 16, 64}));
  EXPECT_EQ(dtypes.size(), 2u);
  EXPECT_GE(clusters.size(), 3u);
  EXPECT_LE(min_batch, 2);
  EXPECT_GE(max_batch, 128);
  EXPECT_LE(min_context, 128);
  EXPECT_GE(max_context, 65536);
  EXPECT_GT(ragged, 0);
}

}  // namespace
}  // namespace mlasim::validate
