// Contracts over random batches: the reference executor equals direct attention, every KV position of every
// (request, query tile) is covered once, partial rows are unique, cluster loads stay within the payload.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "mlasim/model/gpu.h"
#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/plan_checks.h"
#include "mlasim/sim/reference_executor.h"

namespace mlasim::sim {
namespace {

struct RandomCase {
  DecodeBatch batch;
  AiterV1Args args;
};

RandomCase random_case(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<int> v) { return *(v.begin() + rng() % v.size()); };
  RandomCase c;
  DecodeBatch& b = c.batch;
  const int n = 1 + static_cast<int>(rng() % 6);
  const int qlen = 1 + static_cast<int>(rng() % 4);
  std::uniform_int_distribution<int> len(qlen, 5000);
  for (int i = 0; i < n; ++i) {
    b.kv_lens.push_back(rng() % 4 == 0 ? qlen + static_cast<int>(rng() % 40) : len(rng));
    b.qo_lens.push_back(qlen);
  }
  b.q_heads = pick({16, 128});
  b.page_size = pick({1, 16, 64});
  b.kv_granularity = std::max(b.page_size, 16);
  b.causal = rng() % 2 == 0;
  b.q_dtype = b.kv_dtype = rng() % 2 ? DType::fp8 : DType::bf16;
  const char* archs[] = {"gfx950", "gfx942"};
  Gpu gpu;
  gpu.arch = archs[rng() % 2];
  gpu.num_cu = pick({80, 256, 304});
  c.args = make_aiter_v1_args({b, gpu, 0});
  c.args.max_split_per_batch = pick({-1, 1, 8, 16});
  return c;
}

TEST(PlanProperties, ReferenceExecutorEqualsDirectAttentionOnRandomPlans) {
  std::mt19937 rng(20261121);
  int cases = 0, split_cases = 0, folded = 0, multi_tile = 0;
  for (int i = 0; i < 520; ++i) {
    RandomCase c = random_case(rng);
    SCOPED_TRACE(::testing::Message() << "case " << i << " arch " << arch_name(c.args.arch) << " cu " << c.args.num_cu
                                      << " heads " << c.batch.q_heads << " qlen " << c.batch.qo_lens[0] << " page "
                                      << c.batch.page_size << " msb " << c.args.max_split_per_batch);
    const Plan plan = plan_aiter_v1(c.args);
    EXPECT_EQ(plan.model.unassigned_tiles, 0);
    for (const auto& v : check_plan(plan, c.batch)) ADD_FAILURE() << v;

    // Load per cluster: sum over works of (granules + OV) stays within the payload unless the tail rule fired.
    if (plan.model.tail_done_events == 0) {
      for (int cl = 0; cl < plan.num_work_lists(); ++cl) {
        int64_t load = 0;
        for (int w = plan.work_begin(cl); w < plan.work_end(cl); ++w)
          load += (plan.works[w].kv_pages() + c.batch.kv_granularity - 1) / c.batch.kv_granularity +
                  plan.derived.fixed_over_head_num_blocks;
        EXPECT_LE(load, plan.model.payload_blocks) << "cluster " << cl;
      }
    }
    // Small head dims and two sampled heads per head group keep 500 cases fast; every row and tile still runs.
    ReferenceOptions opt;
    opt.d_qk = 16;
    opt.d_v = 8;
    opt.seed = static_cast<uint64_t>(i);
    for (int g = 0; g < plan.derived.qk_batch_ratio; ++g) {
      opt.heads.push_back(g * plan.derived.num_heads_eff);
      opt.heads.push_back(g * plan.derived.num_heads_eff + plan.derived.num_heads_eff - 1);
    }
    const ReferenceExecutor ex(c.batch, opt);
    EXPECT_LE(max_abs_difference(ex.run_plan(plan), ex.run_direct()), 1e-4f);
    ++cases;
    split_cases += plan.num_partials() > 0;
    folded += plan.derived.qk_batch_ratio > 1;
    multi_tile += plan.model.qo_splits;
  }
  EXPECT_GE(cases, 500);
  // The random space must reach the interesting regimes.
  EXPECT_GT(split_cases, 100);
  EXPECT_GT(folded, 20);
  EXPECT_GT(multi_tile, 20);
}

// AITER's v1 plan of `b` on an MI355X-sized gfx950 (256 CUs).
Plan gfx950_plan(const DecodeBatch& b) {
  Gpu gpu;
  gpu.arch = "gfx950";
  gpu.num_cu = 256;
  return plan_aiter_v1(make_aiter_v1_args({b, gpu, 0}));
}

TEST(PlanProperties, FullHeadDimsOnOneSplitBatch) {
  DecodeBatch b = DecodeBatch::uniform(2, 700, 2);
  const Plan plan = gfx950_plan(b);
  ASSERT_GT(plan.num_partials(), 0);
  const ReferenceExecutor ex(b, ReferenceOptions{});
  const auto direct = ex.run_direct();
  EXPECT_GT(max_abs_value(direct), 0.01f);
  EXPECT_LE(max_abs_difference(ex.run_plan(plan), direct), 1e-4f);
}

TEST(PlanProperties, CheckPlanReportsAMissingFragment) {
  const DecodeBatch b = DecodeBatch::uniform(1, 4000);
  Plan plan = gfx950_plan(b);
  plan.works[3].kv_start += 16;  // leaves 16 tokens uncovered
  EXPECT_FALSE(check_plan(plan, b).empty());
  const ReferenceExecutor ex(b, ReferenceOptions{16, 8, 3, {0}});
  EXPECT_GT(max_abs_difference(ex.run_plan(plan), ex.run_direct()), 1e-3f);
}

TEST(PlanProperties, CheckPlanReportsTwoFragmentsSharingPartialRows) {
  const DecodeBatch b = DecodeBatch::uniform(1, 4000);
  Plan plan = gfx950_plan(b);
  ASSERT_GT(plan.num_partials(), 2);
  ASSERT_TRUE(check_plan(plan, b).empty());
  const int32_t taken = plan.works[0].partial_qo_loc;
  plan.works[1].partial_qo_loc = taken;  // the second fragment overwrites the first one's partial
  const std::vector<std::string> bad = check_plan(plan, b);
  EXPECT_NE(std::find(bad.begin(), bad.end(), "partial row " + std::to_string(taken) + " is used twice"), bad.end())
      << ::testing::PrintToString(bad);
}

}  // namespace
}  // namespace mlasim::sim
