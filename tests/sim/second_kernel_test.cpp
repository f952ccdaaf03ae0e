// What a second kernel adds (CostParams::second_kernel_us): a plan whose requests split launches the reduce after
// stage 1 and pays its launch gap; a plan whose requests do not split is one kernel and pays nothing for it.
#include <gtest/gtest.h>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/simulator.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

using testing::h100;

// DeepSeek's 128 heads in bf16 on the H100, as our kernels run them, planned by `policy` and simulated with the
// profile's parameters but `second_kernel_us`.
Prediction simulate_with(const char* policy, int batch, int context, double second_kernel_us) {
  WorkloadContext ctx = testing::hopper_context("h100", batch, context);
  ctx.params.second_kernel_us = second_kernel_us;
  return simulate(testing::plan(policy, ctx.batch, "h100"), ctx.batch, ctx.gpu, ctx.params,
                  KernelClassId::wgmma_bf16_pair);
}

TEST(SecondKernel, APlanWithAReduceStartsItLaterByTheSecondKernelsTime) {
  const Prediction without = simulate_with("fixed:splits=4", 16, 4096, 0.0);
  const Prediction with = simulate_with("fixed:splits=4", 16, 4096, 1.5);
  ASSERT_FALSE(with.timeline.reduce.empty());
  EXPECT_DOUBLE_EQ(with.metrics.stage1_us, without.metrics.stage1_us);
  EXPECT_NEAR(with.metrics.kernel_us - without.metrics.kernel_us, 1.5, 1e-9);
  EXPECT_NEAR(with.metrics.reduce_us - without.metrics.reduce_us, 1.5, 1e-9);
  EXPECT_NEAR(with.timeline.reduce.front().begin_us - without.timeline.reduce.front().begin_us, 1.5, 1e-9);
}

TEST(SecondKernel, APlanWithoutSplitsIsOneKernelAndDoesNotPayIt) {
  const Prediction without = simulate_with("fixed:splits=1", 16, 4096, 0.0);
  const Prediction with = simulate_with("fixed:splits=1", 16, 4096, 1.5);
  ASSERT_TRUE(with.timeline.reduce.empty());
  EXPECT_DOUBLE_EQ(with.metrics.kernel_us, without.metrics.kernel_us);
}

TEST(SecondKernel, TheNvidiaProfilesFitItAndTheRangeIsChecked) {
  // Fitted beside the kernel model (scripts/fit_profiles.sh); the timelines measure 1.6 to 1.9 us apart from the fits
  // (docs/validation.md section 7.6).
  EXPECT_GT(cost_params_for(h100()).second_kernel_us, 0.5);
  EXPECT_GT(cost_params_for(load_gpu("h200")).second_kernel_us, 0.5);
  EXPECT_EQ(cost_params_for(testing::mi355x()).second_kernel_us, 0.0);  // AMD: not fitted
  EXPECT_TRUE(is_kernel_param_key("second_kernel_us"));
  CostParams q;
  EXPECT_THROW(set_cost_param(q, "second_kernel_us", -1.0), InputError);
}

}  // namespace
}  // namespace mlasim::sim
