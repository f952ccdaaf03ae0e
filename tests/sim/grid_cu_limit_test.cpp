// Grid plans honour the request's clusters: the plan records the CUs it may use (Plan::cu_limit), apart from its
// work lists (one per workgroup), and the simulator places the workgroups on at most that many CUs.
#include <gtest/gtest.h>

#include <set>

#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

using testing::mi355x;

// bf16, 16 heads, page 1: a batch every grid policy plans.
DecodeBatch batch_of(int requests, int context) {
  DecodeBatch b = DecodeBatch::uniform(requests, context);
  b.q_dtype = b.kv_dtype = DType::bf16;
  return b;
}

const char* const kGridSpecs[] = {"aiter-nonpersistent", "flashinfer-decode", "fixed:splits=8"};

// The CUs the timeline's boxes ran on (row r is slot r % rows_per_cu of CU r / rows_per_cu).
std::set<int> cus_used(const Timeline& t) {
  std::set<int> cus;
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (!t.rows[r].empty()) cus.insert(static_cast<int>(r) / t.rows_per_cu);
  return cus;
}

TEST(GridCuLimit, AGridOnNClustersRunsOnAtMostNCus) {
  const DecodeBatch batch = batch_of(64, 8192);
  const CostParams params = cost_params_for(mi355x());
  for (const char* spec : kGridSpecs) {
    const Plan plan = make_policy(spec)->plan({batch, mi355x(), 32});
    ASSERT_EQ(plan.kernel, KernelKind::grid) << spec;
    EXPECT_EQ(plan.cu_limit, 32) << spec;
    EXPECT_GT(plan.num_work_lists(), 32) << spec << ": the workgroups outnumber the CUs, so the limit binds";
    const Prediction p = simulate(plan, batch, mi355x(), params);
    EXPECT_EQ(p.timeline.num_clusters, 32 * p.timeline.rows_per_cu) << spec;
    const std::set<int> cus = cus_used(p.timeline);
    EXPECT_EQ(static_cast<int>(cus.size()), 32) << spec;
    EXPECT_LT(*cus.rbegin(), 32) << spec;
    EXPECT_EQ(p.metrics.active_clusters, 32) << spec;
  }
}

TEST(GridCuLimit, FewerClustersTakeLonger) {
  const DecodeBatch batch = batch_of(64, 8192);
  const CostParams params = cost_params_for(mi355x());
  for (const char* spec : kGridSpecs) {
    // The same split count on both, so only the placement differs.
    const Plan whole = make_policy(spec)->plan({batch, mi355x(), 0});
    Plan limited = whole;
    limited.cu_limit = 16;
    EXPECT_GT(simulate_metrics(limited, batch, mi355x(), params).stage1_us,
              simulate_metrics(whole, batch, mi355x(), params).stage1_us)
        << spec;
  }
}

TEST(GridCuLimit, ZeroClustersIsTheWholeGpuAsBefore) {
  const DecodeBatch batch = batch_of(64, 8192);
  const CostParams params = cost_params_for(mi355x());
  for (const char* spec : kGridSpecs) {
    const Plan plan = make_policy(spec)->plan({batch, mi355x(), 0});
    EXPECT_EQ(plan.cu_limit, mi355x().num_cu) << spec;
    // A plan that records no limit (one read from JSON) also gets the whole GPU: the same prediction.
    Plan unrecorded = plan;
    unrecorded.cu_limit = 0;
    const Prediction p = simulate(plan, batch, mi355x(), params);
    EXPECT_EQ(p.metrics, simulate_metrics(unrecorded, batch, mi355x(), params)) << spec;
    EXPECT_EQ(p.timeline.num_clusters, mi355x().num_cu * p.timeline.rows_per_cu) << spec;
    EXPECT_EQ(static_cast<int>(cus_used(p.timeline).size()), std::min(plan.num_work_lists(), mi355x().num_cu)) << spec;
  }
}

TEST(GridCuLimit, TwiceTheWorkgroupsOfTheLimitRunInTwoWaves) {
  // Equal workgroups of one request each: 256 on 128 CUs are two waves of the 128 that fit.
  const CostParams params = default_cost_params(mi355x());
  const DecodeBatch wide = batch_of(256, 4000), half = batch_of(128, 4000);
  Plan two_waves = make_policy("fixed:splits=1")->plan({wide, mi355x(), 128});
  const Plan one_wave = make_policy("fixed:splits=1")->plan({half, mi355x(), 0});
  EXPECT_NEAR(simulate_metrics(two_waves, wide, mi355x(), params).stage1_us,
              2 * simulate_metrics(one_wave, half, mi355x(), params).stage1_us, 1e-9 * 4000);
}

TEST(GridCuLimit, PersistentPlansRecordTheLimitApartFromTheirWorkLists) {
  // AITER's HipKittens m16x4 kernel runs two workgroups per CU: 2 x 64 work lists on 64 CUs.
  DecodeBatch batch = DecodeBatch::uniform(8, 4000, 4);
  const Plan plan = make_policy("aiter-v1:experimental=1")->plan({batch, mi355x(), 64});
  EXPECT_EQ(plan.cu_limit, 64);
  EXPECT_EQ(plan.num_work_lists(), 128);
}

}  // namespace
}  // namespace mlasim::sim
