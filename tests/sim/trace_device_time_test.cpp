// The time a trace gives a plan's kernels (sim/trace_device_time.h): the kernels a plan launches, kernel_us less
// the event timing's overhead, and the committed profiles' values as the probe runs give them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mlasim/model/gpu.h"
#include "mlasim/model/median.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/sim/trace_device_time.h"
#include "mlasim/sim/workload.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

WorkloadContext h100_workload(int batch, int context) { return testing::hopper_context("h100", batch, context); }

int kernels_of(const std::string& policy, const WorkloadContext& ctx) {
  const Evaluation e = evaluate(policy, ctx);
  return plan_kernels(*e.plan, kernel_batch(*e.plan, ctx.batch));
}

TEST(TraceDeviceTime, APlanLaunchesStageOneAndAReduceWhenItHasPartials) {
  const WorkloadContext ctx = h100_workload(16, 4096);
  EXPECT_EQ(kernels_of("fixed:splits=1", ctx), 1);
  EXPECT_EQ(kernels_of("fixed:splits=4", ctx), 2);
}

TEST(TraceDeviceTime, AMergedTwoScopeRunAddsTheScopeMerge) {
  DecodeBatch b = DecodeBatch::uniform(32, 65536, 1);
  b.q_heads = 16;
  b.scopes = TwoScopes::preset("csa");
  b.scopes.run = TwoScopes::Run::merged;
  const Gpu gpu = load_gpu("mi355x");
  const Plan p = make_policy("aiter-v1")->plan({b, gpu, 0});
  const DecodeBatch streams = kernel_batch(p, b);
  ASSERT_FALSE(streams.merge_token.empty());
  EXPECT_EQ(plan_kernels(p, streams), 2 + (p.num_partials() > 0 ? 1 : 0));
}

TEST(TraceDeviceTime, KernelTimeLessTheEventOverheadPerKernel) {
  Metrics m;
  m.kernel_us = 100;
  CostParams p;
  EXPECT_DOUBLE_EQ(trace_device_us(m, p, 2), 100);  // not measured: the event interval stands
  p.events_overhead_us = 3.5;
  p.events_kernel_overhead_us = 1.25;
  EXPECT_DOUBLE_EQ(trace_device_us(m, p, 1), 96.5);
  EXPECT_DOUBLE_EQ(trace_device_us(m, p, 2), 95.25);
  EXPECT_DOUBLE_EQ(trace_device_us(m, p, 3), 94);
  m.kernel_us = 2;
  EXPECT_DOUBLE_EQ(trace_device_us(m, p, 2), 0);  // never below 0
}

// scripts/events_overhead_fit.py: the medians over the committed probe runs are the profile's values.
TEST(TraceDeviceTime, TheProfilesCarryTheMediansOfTheirProbeRuns) {
  for (const std::string gpu : {"h100", "h200"}) {
    std::vector<double> one, two;
    for (const std::string run : {"run1", "run2"}) {
      std::ifstream in(std::string(MLASIM_DATA_DIR) + "/measurements/" + gpu + "/events_vs_trace/" + run +
                       "/events_vs_trace.csv");
      ASSERT_TRUE(in) << gpu << " " << run;
      std::string line;
      std::getline(in, line);
      std::vector<std::string> header;
      for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
      const auto col = [&](const std::string& name) {
        return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
      };
      const size_t kernels = col("kernels"), excess = col("events_minus_device_us");
      ASSERT_LT(excess, header.size());
      while (std::getline(in, line)) {
        std::vector<std::string> cells;
        for (std::stringstream ss(line); std::getline(ss, line, ',');) cells.push_back(line);
        (std::stoi(cells[kernels]) == 1 ? one : two).push_back(std::stod(cells[excess]));
      }
    }
    ASSERT_GE(one.size(), 10u) << gpu;
    ASSERT_GE(two.size(), 10u) << gpu;
    const CostParams p = cost_params_for(load_gpu(gpu));
    EXPECT_NEAR(p.events_overhead_us, median(one), 1e-4) << gpu;
    EXPECT_NEAR(p.events_kernel_overhead_us, median(two) - median(one), 1e-4) << gpu;
  }
}

}  // namespace
}  // namespace mlasim::sim
