// What a reduce pays for partials stage 1 pushed out of L2 (CostParams::reduce_miss_us): a plan whose stage 1 runs
// in more than one wave streams far more than the L2 holds after its first partials, so the reduce reads those from
// memory; a one-wave plan's partials land at its end and stay.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/simulator.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

// DeepSeek's 16 heads in bf16 on the H200, as our kernels run them, split in two, with the profile's parameters
// but `reduce_miss_us` (and the L2 carry-over's cap where `cap_mb` is given).
Prediction simulate_with(int batch, int context, double reduce_miss_us, std::optional<double> cap_mb = {}) {
  WorkloadContext ctx = testing::hopper_context("h200", batch, context, 16);
  ctx.params.reduce_miss_us = reduce_miss_us;
  if (cap_mb) ctx.params.l2_carry_cap_mb = *cap_mb;
  return simulate(testing::plan("fixed:splits=2", ctx.batch, "h200"), ctx.batch, ctx.gpu, ctx.params,
                  KernelClassId::wgmma_bf16);
}

TEST(ReduceMiss, PartialsOfAnEarlierWaveComeFromMemoryAndCostTheirItemsMore) {
  // 256 works on 132 SMs: the first wave's partials have the second wave's KV (over 100 MB) streamed after them.
  const Prediction without = simulate_with(128, 2048, 0.0);
  const Prediction with = simulate_with(128, 2048, 1.0);
  ASSERT_FALSE(with.timeline.reduce.empty());
  EXPECT_DOUBLE_EQ(with.metrics.stage1_us, without.metrics.stage1_us);
  EXPECT_GT(with.metrics.reduce_us, without.metrics.reduce_us + 0.5);
  // And its longest item is longer.
  double longest_without = 0, longest_with = 0;
  for (const auto& b : without.timeline.reduce) longest_without = std::max(longest_without, b.end_us - b.begin_us);
  for (const auto& b : with.timeline.reduce) longest_with = std::max(longest_with, b.end_us - b.begin_us);
  EXPECT_GT(longest_with, longest_without);
}

TEST(ReduceMiss, OneWavesPartialsStayInL2AndCostNothingMore) {
  // 32 works in one wave: each partial lands with little more than the other works' tails streamed after it.
  const Prediction without = simulate_with(16, 4096, 0.0);
  const Prediction with = simulate_with(16, 4096, 1.0);
  ASSERT_FALSE(with.timeline.reduce.empty());
  EXPECT_DOUBLE_EQ(with.metrics.kernel_us, without.metrics.kernel_us);
}

TEST(ReduceMiss, WithoutTheL2CapNothingIsPricedAndTheRangeIsChecked) {
  EXPECT_DOUBLE_EQ(simulate_with(128, 2048, 1.0, 0.0).metrics.kernel_us,
                   simulate_with(128, 2048, 0.0, 0.0).metrics.kernel_us);
  EXPECT_TRUE(is_kernel_param_key("reduce_miss_us"));
  CostParams q;
  EXPECT_THROW(set_cost_param(q, "reduce_miss_us", -1.0), InputError);
}

}  // namespace
}  // namespace mlasim::sim
