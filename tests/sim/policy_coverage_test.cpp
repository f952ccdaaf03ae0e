// Every policy keeps the Plan contract (policy_plan_checks.h) over many random batches, computes the same
// attention as the direct formula when its plan is executed (ReferenceExecutor), and names its kernel.
#include <gtest/gtest.h>

#include <random>

#include "mlasim/sim/reference_executor.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"

namespace mlasim::sim {
namespace {

struct Case {
  std::string spec;
  std::vector<int> heads;
  std::vector<int> qlens;  // uniform query lengths to draw from
  bool ragged_qlen;        // also draw per-request query lengths
  std::vector<int> pages;  // page sizes
};

DecodeBatch random_batch(std::mt19937& rng, const Case& c) {
  auto pick = [&](const std::vector<int>& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  const int B = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? std::uniform_int_distribution<int>(1, 300)(rng)
                                                                   : std::uniform_int_distribution<int>(1, 12)(rng);
  const int longest = pick({40, 700, 5000, 120000});
  DecodeBatch b;
  b.q_heads = pick(c.heads);
  b.q_dtype = b.kv_dtype = std::uniform_int_distribution<int>(0, 1)(rng) ? DType::fp8 : DType::bf16;
  b.page_size = pick(c.pages);
  b.kv_granularity = std::max(16, b.page_size);
  b.causal = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
  const bool ragged = c.ragged_qlen && std::uniform_int_distribution<int>(0, 1)(rng);
  const int qlen = pick(c.qlens);
  const bool same_kv = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
  const int shared_kv = std::uniform_int_distribution<int>(16, longest)(rng);
  for (int i = 0; i < B; ++i) {
    const int q = ragged ? pick(c.qlens) : qlen;
    b.qo_lens.push_back(q);
    b.kv_lens.push_back(same_kv ? shared_kv : std::uniform_int_distribution<int>(q, longest)(rng));
  }
  return b;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"aiter-nonpersistent", {16, 128}, {1, 2, 4}, true, {1}},
      {"aiter-nonpersistent:split_rule=v0", {16, 128}, {1}, false, {1}},
      {"aiter-nonpersistent:split_rule=v0-intended", {16}, {1, 3}, true, {1}},
      {"aiter-nonpersistent:num_kv_splits=7,block=128", {16, 128}, {1, 2}, true, {1}},
      {"flashmla", {16, 32, 64, 128}, {1, 2, 4}, false, {1, 16, 64}},
      {"flashmla:scheduler=2026,parts=10", {16, 128}, {1, 3}, false, {1, 4}},
      {"flashinfer-mla", {16, 64}, {1, 2, 5, 16}, true, {1}},
      {"flashinfer-mla", {128}, {1, 2}, false, {1}},
      {"flashinfer-decode", {8, 16, 128}, {1}, false, {1, 16}},
      {"flashinfer-decode:occupancy=2", {16, 32}, {1}, false, {1, 64}},
      {"fixed", {16, 128}, {1, 2}, true, {1, 16}},
      {"fixed:splits=13,granule=32", {16}, {1}, false, {1}},
      {"fixed:splits=3,heads_per_wg=16", {16, 32, 128}, {1, 4}, false, {1, 16}},
      {"aiter-v1", {16}, {1}, false, {1}},
  };
  return all;
}

TEST(PolicyCoverage, EveryKvPositionOfEveryTileOnceOverRandomBatches) {
  const Gpu gpu = load_gpu("mi355x");
  std::mt19937 rng(20261122);
  const std::vector<int> clusters = {0, 0, 64, 100, 255};
  for (const Case& c : cases()) {
    const auto policy = make_policy(c.spec);
    for (int i = 0; i < 50; ++i) {
      const DecodeBatch batch = random_batch(rng, c);
      const int cl = clusters[i % clusters.size()];
      const Plan p = policy->plan({batch, gpu, cl});
      ASSERT_TRUE(testing::plan_keeps_contract(p, batch, !c.spec.starts_with("aiter-v1")))
          << c.spec << ", case " << i << ": " << batch.size() << " requests, " << batch.q_heads << " heads, qlen "
          << batch.max_qo_len() << ", page " << batch.page_size << ", clusters " << cl;
      ASSERT_EQ(p.kernel, policy->kernel()) << c.spec;
    }
  }
}

TEST(PolicyCoverage, ExecutedPlansEqualDirectAttention) {
  const Gpu gpu = load_gpu("mi355x");
  std::mt19937 rng(11222026);
  int split = 0;
  for (const Case& c : cases()) {
    const auto policy = make_policy(c.spec);
    for (int i = 0; i < 12; ++i) {
      DecodeBatch batch = random_batch(rng, c);
      batch.kv_lens.resize(std::min(batch.size(), 4));  // small batches keep the CPU attention fast
      batch.qo_lens.resize(batch.kv_lens.size());
      for (int& kv : batch.kv_lens) kv = std::min(kv, 3000);
      const Plan p = policy->plan({batch, gpu, i % 2 ? 64 : 0});
      ReferenceOptions opt;
      opt.d_qk = 16;
      opt.d_v = 8;
      opt.seed = static_cast<uint64_t>(i);
      for (int g = 0; g < p.derived.qk_batch_ratio; ++g) {  // the first and last head of every head group
        opt.heads.push_back(g * p.derived.num_heads_eff);
        opt.heads.push_back(g * p.derived.num_heads_eff + p.derived.num_heads_eff - 1);
      }
      const ReferenceExecutor ex(batch, opt);
      EXPECT_LE(max_abs_difference(ex.run_plan(p), ex.run_direct()), 1e-4f)
          << c.spec << ", case " << i << ": " << batch.size() << " requests, " << batch.q_heads << " heads, qlen "
          << batch.max_qo_len() << ", page " << batch.page_size;
      split += p.num_partials() > 0;
    }
  }
  EXPECT_GT(split, 60);  // most plans split some request
}

TEST(PolicyCoverage, RegistryEntriesBuildWithTheirDefaults) {
  const Gpu gpu = load_gpu("mi355x");
  const DecodeBatch batch = DecodeBatch::uniform(8, 3000);
  for (const PolicyInfo& info : policy_registry()) {
    const auto policy = make_policy(info.name);
    EXPECT_EQ(policy->name(), info.name);
    EXPECT_EQ(policy->kernel(), info.kernel) << info.name;
    EXPECT_TRUE(testing::plan_keeps_contract(policy->plan({batch, gpu, 0}), batch, !info.name.starts_with("aiter-v1")))
        << info.name;
  }
}

TEST(PolicyCoverage, APolicyStampsItsCanonicalSpecOnEveryPlan) {
  const Gpu gpu = load_gpu("mi355x");
  DecodeBatch batch = DecodeBatch::uniform(8, 3000);
  batch.q_dtype = batch.kv_dtype = DType::bf16;
  for (const PolicyInfo& info : policy_registry()) {
    const auto policy = make_policy(info.name);
    EXPECT_EQ(policy->spec(), info.name);
    EXPECT_EQ(policy->plan({batch, gpu, 0}).policy, info.name);
  }
  // Knobs sorted by key, spaces trimmed, values as written.
  const auto fixed = make_policy(" fixed : splits = 8 , granule=4 ");
  EXPECT_EQ(fixed->spec(), "fixed:granule=4,splits=8");
  EXPECT_EQ(fixed->plan({batch, gpu, 0}).policy, "fixed:granule=4,splits=8");
}

}  // namespace
}  // namespace mlasim::sim
