// How many reduce workgroups a CU holds (CostParams::reduce_blocks_per_cu and reduce_wide_blocks_per_cu): the
// reduce's waves follow the measured residency of the reduce form the launch runs, and AITER's rule stays 8.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/simulator.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

using testing::h100;

// 128 heads in bf16, as DeepSeek's decode runs them.
DecodeBatch deepseek(int batch, int context) {
  DecodeBatch b = testing::uniform(batch, context, 128);
  b.q_dtype = DType::bf16;
  b.kv_dtype = DType::bf16;
  b.page_size = 64;
  return b;
}

// Reduce workgroups of `p` that start together in the first wave: those that begin when the first ones do. The
// simulator keeps a task's workgroups together (the 64 heads of a head group side by side, docs/model.md §4), so
// a wave holds the whole tasks that fit the slots.
int first_wave_blocks(const Prediction& p) {
  double first = p.timeline.reduce.front().begin_us;
  for (const ReduceBox& b : p.timeline.reduce) first = std::min(first, b.begin_us);
  std::set<int> blocks;
  for (const ReduceBox& b : p.timeline.reduce)
    if (b.begin_us <= first + 1e-9)
      for (int h = 0; h < b.heads; ++h) blocks.insert(b.block + h);
  return static_cast<int>(blocks.size());
}

Prediction simulate_with(const Plan& plan, const DecodeBatch& batch, int narrow, int wide) {
  CostParams params = cost_params_for(h100());
  params.reduce_blocks_per_cu = narrow;
  params.reduce_wide_blocks_per_cu = wide;
  return simulate(plan, batch, h100(), params, KernelClassId::wgmma_bf16_pair);
}

TEST(ReduceResidency, MoreResidentWorkgroupsRunThePersistentReduceInFewerWaves) {
  // 24 x 2048 in two splits: 3072 items over the persistent launch's 16 x 132 = 2112 workgroups.
  const DecodeBatch batch = deepseek(24, 2048);
  const Plan plan = testing::plan("fixed:splits=2", batch, "h100");
  const Prediction aiter_rule = simulate_with(plan, batch, 0, 0);
  const Prediction measured = simulate_with(plan, batch, 10, 2);
  EXPECT_EQ(first_wave_blocks(aiter_rule), 1024);  // 16 tasks of 64 in 8 x 132 = 1056 slots
  EXPECT_EQ(first_wave_blocks(measured), 1280);    // 20 tasks of 64 in 10 x 132 = 1320 slots
  EXPECT_LT(measured.metrics.reduce_us, aiter_rule.metrics.reduce_us);
  EXPECT_DOUBLE_EQ(measured.metrics.stage1_us, aiter_rule.metrics.stage1_us);  // stage 1 does not change
  // The wide form's residency does not touch a launch whose tiles have 2 partials.
  EXPECT_DOUBLE_EQ(simulate_with(plan, batch, 10, 1).metrics.reduce_us, measured.metrics.reduce_us);
}

TEST(ReduceResidency, TilesOfSixteenPartialsRunTheWideFormsResidency) {
  // 8 x 16384 in 16 splits: a grid of 8 x 128 = 1024 workgroups of 16 partials each.
  const DecodeBatch batch = deepseek(8, 16384);
  const Plan plan = testing::plan("fixed:splits=16", batch, "h100");
  const Prediction narrow_only = simulate_with(plan, batch, 10, 0);  // wide 0: as the narrow form
  const Prediction wide = simulate_with(plan, batch, 10, 2);
  EXPECT_EQ(first_wave_blocks(narrow_only), 1024);  // all of them in 1320 slots
  EXPECT_EQ(first_wave_blocks(wide), 256);          // 4 tasks of 64 in 2 x 132 = 264 slots: four waves
  // Four waves instead of one; the memory limit, which one wave hits, keeps it from four times as long. The
  // reduce's own span: reduce_us also holds the gaps before it, the same in both.
  const CostParams p = cost_params_for(h100());
  const double gaps = p.stage_gap_us + p.second_kernel_us;
  EXPECT_GT(wide.metrics.reduce_us - gaps, 1.2 * (narrow_only.metrics.reduce_us - gaps));
}

TEST(ReduceResidency, TheProfilesCarryTheMeasuredValuesAndTheRangeIsChecked) {
  const CostParams p = cost_params_for(h100());
  EXPECT_EQ(p.reduce_blocks_per_cu, 10);
  EXPECT_EQ(p.reduce_wide_blocks_per_cu, 2);
  EXPECT_EQ(cost_params_for(testing::mi355x()).reduce_blocks_per_cu, 0);  // AITER's own rule
  EXPECT_TRUE(is_kernel_param_key("reduce_blocks_per_cu"));
  CostParams q;
  EXPECT_THROW(set_cost_param(q, "reduce_blocks_per_cu", 65), InputError);
  EXPECT_THROW(set_cost_param(q, "reduce_wide_blocks_per_cu", -1), InputError);
  set_cost_param(q, "reduce_wide_blocks_per_cu", 4);
  EXPECT_EQ(get_cost_param(q, "reduce_wide_blocks_per_cu"), 4);
}

}  // namespace
}  // namespace mlasim::sim
