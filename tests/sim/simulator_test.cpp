// The simulator against the analytic limits of its fluid model (docs/model.md §3), and the shape of what it returns.
#include "mlasim/sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

using testing::kFp8KvBytesPerToken;
using testing::mi355x;
using testing::uniform;

// Datasheet defaults only, so fitted profile values never move these checks.
CostParams datasheet_params() { return default_cost_params(mi355x()); }

// A persistent plan with one final work of `tokens` KV tokens (qlen 1, 16 heads) on each of `clusters`
// clusters; request c runs on cluster c.
Plan one_work_per_cluster(int clusters, int tokens, int heads = 16) {
  Plan p;
  p.kernel = KernelKind::persistent;
  p.derived.num_clusters = clusters;
  p.derived.num_heads_eff = heads;
  p.derived.num_batches_eff = clusters;
  p.num_requests = clusters;
  p.num_heads = heads;
  p.reduce_indptr.assign(static_cast<size_t>(clusters) + 1, 0);
  p.reduce_final_map.assign(static_cast<size_t>(clusters), {kUnwritten, kUnwritten});
  for (int c = 0; c < clusters; ++c) {
    p.work_indptr.push_back(c);
    p.works.push_back(WorkInfo{c, -1, c, c + 1, c * tokens, (c + 1) * tokens, 0, 0});
  }
  p.work_indptr.push_back(clusters);
  p.set_num_tiles(clusters);
  return p;
}

Plan plan_with(const std::string& spec, const DecodeBatch& batch, const Gpu& gpu = mi355x()) {
  return make_policy(spec)->plan(PlanRequest{batch, gpu, 0});
}

double final_output_bytes(int heads) { return heads * 2.0 * 512; }

TEST(Simulator, OneWorkOnOneClusterTakesFixedCostPlusBytesOverBetaCu) {
  const CostParams p = datasheet_params();
  const double bytes = 100000 * kFp8KvBytesPerToken + final_output_bytes(16);
  const Metrics m = simulate_metrics(one_work_per_cluster(1, 100000), uniform(1, 100000), mi355x(), p);
  EXPECT_NEAR(m.stage1_us, p.t_fix_us + bytes / (p.beta_cu_gbps * 1e3), 1e-9 * m.stage1_us);
}

TEST(Simulator, AllClustersStreamingShareTheHbmBandwidth) {
  CostParams p = datasheet_params();
  p.beta_cu_gbps = 100;  // well above B_hbm / 256, so the device bound binds
  const double bytes = 20000 * kFp8KvBytesPerToken + final_output_bytes(16);
  const Metrics m = simulate_metrics(one_work_per_cluster(256, 20000), uniform(256, 20000), mi355x(), p);
  EXPECT_NEAR(m.stage1_us, p.t_fix_us + 256 * bytes / (p.b_hbm_tbps * 1e6), 1e-9 * m.stage1_us);
}

TEST(Simulator, ComputeBoundWorkTakesFlopsOverTheCuMatrixRate) {
  const CostParams p = datasheet_params();
  const double flops = 2.0 * 128 * 100000 * (576 + 512);
  const double cu_flops_per_us = mi355x().fp8_tflops * 1e6 * p.matrix_efficiency / mi355x().num_cu;
  const Metrics m = simulate_metrics(one_work_per_cluster(1, 100000, 128), uniform(1, 100000, 128), mi355x(), p);
  EXPECT_NEAR(m.stage1_us, p.t_fix_us + flops / cu_flops_per_us, 1e-9 * m.stage1_us);
}

TEST(Simulator, PartialOverlapOfStreamingAndMathJoinsTheTwoTimes) {
  // One work whose bytes take m alone and whose math takes c: (m^n + c^n)^(1/n) with compute_overlap_n = n,
  // max(m, c) with 0; n = 1 adds them.
  CostParams p = datasheet_params();
  const double bytes = 100000 * kFp8KvBytesPerToken + final_output_bytes(128);
  const double m_us = bytes / (p.beta_cu_gbps * 1e3);
  const double c_us =
      2.0 * 128 * 100000 * (576 + 512) / (mi355x().fp8_tflops * 1e6 * p.matrix_efficiency / mi355x().num_cu);
  const auto stage1 = [&](double n) {
    p.compute_overlap_n = n;
    return simulate_metrics(one_work_per_cluster(1, 100000, 128), uniform(1, 100000, 128), mi355x(), p).stage1_us;
  };
  EXPECT_NEAR(stage1(0), p.t_fix_us + std::max(m_us, c_us), 1e-9 * stage1(0));
  EXPECT_NEAR(stage1(1), p.t_fix_us + m_us + c_us, 1e-9 * stage1(1));
  EXPECT_NEAR(stage1(4), p.t_fix_us + std::pow(std::pow(m_us, 4) + std::pow(c_us, 4), 0.25), 1e-9 * stage1(4));
  EXPECT_NEAR(stage1(64), stage1(0), 0.02 * stage1(0));  // a large n approaches the perfect overlap
}

TEST(Simulator, APageByPageProducerPaysForEveryPageCopy) {
  // One fp8 wgmma work of 4096 tokens: 16 heads make one pass, 64 heads four (16-row passes re-reading the KV).
  // On pages of 16 tokens the producer issues 256 copies per pass, on pages of 64 tokens 64; each adds
  // page_copy_us. A class that copies 16-byte chunks whatever the page (the bf16 wgmma) pays nothing.
  const Gpu& h100 = load_gpu("h100");
  CostParams p = default_cost_params(h100);
  const auto stage1 = [&](KernelClassId id, int page, int heads) {
    DecodeBatch b = uniform(1, 4096, heads);
    b.page_size = page;
    b.kv_dtype = id == KernelClassId::wgmma_fp8 ? DType::fp8 : DType::bf16;
    return simulate_metrics(one_work_per_cluster(1, 4096 / page, heads), b, h100, p, id).stage1_us;
  };
  const double base16 = stage1(KernelClassId::wgmma_fp8, 16, 16), base64 = stage1(KernelClassId::wgmma_fp8, 64, 16);
  const double base16x4 = stage1(KernelClassId::wgmma_fp8, 16, 64);
  const double bf16 = stage1(KernelClassId::wgmma_bf16, 16, 16);
  EXPECT_NEAR(base16, base64, 1e-9 * base16);  // no cost set: the page does not matter
  for (auto id : {KernelClassId::wgmma_fp8, KernelClassId::wgmma_bf16})
    p.classes[static_cast<size_t>(id)].page_copy_us = 0.1;
  EXPECT_NEAR(stage1(KernelClassId::wgmma_fp8, 16, 16), base16 + 256 * 0.1, 1e-9 * base16);
  EXPECT_NEAR(stage1(KernelClassId::wgmma_fp8, 64, 16), base64 + 64 * 0.1, 1e-9 * base16);
  EXPECT_NEAR(stage1(KernelClassId::wgmma_fp8, 16, 64), base16x4 + 4 * 256 * 0.1, 1e-9 * base16x4);
  EXPECT_NEAR(stage1(KernelClassId::wgmma_bf16, 16, 16), bf16, 1e-9 * bf16);
}

TEST(Simulator, PartialOverlapCostsLittleWhereOneTimeDominates) {
  // 16 fp8 heads: the bytes take about four times the math, so n = 4 adds well under 1 % to stage 1, but it adds.
  CostParams p = datasheet_params();
  const auto stage1 = [&](double n) {
    p.compute_overlap_n = n;
    return simulate_metrics(one_work_per_cluster(8, 50000), uniform(8, 50000), mi355x(), p).stage1_us;
  };
  EXPECT_GT(stage1(4), stage1(0));
  EXPECT_LT(stage1(4), 1.005 * stage1(0));
}

TEST(Simulator, ClustersThatStartStreamingLaterGetTheFreedBandwidth) {
  // Two clusters at the device bound: both stream at B/2 until the shorter ends, then the longer at min(beta, B).
  CostParams p = datasheet_params();
  p.beta_cu_gbps = 1e6;
  p.b_hbm_tbps = 0.01;  // 1e4 bytes per us: far below the compute floor
  p.t_fix_us = 0;
  Plan plan = one_work_per_cluster(2, 1000);
  plan.works[1].kv_end = plan.works[1].kv_start + 3000;
  DecodeBatch batch = uniform(2, 1000);
  batch.kv_lens[1] = 3000;
  const double a = 1000 * kFp8KvBytesPerToken + final_output_bytes(16),
               b = 3000 * kFp8KvBytesPerToken + final_output_bytes(16);
  const Prediction pr = simulate(plan, batch, mi355x(), p);
  EXPECT_NEAR(pr.timeline.rows[0][0].end_us, 2 * a / 1e4, 1e-9);
  EXPECT_NEAR(pr.timeline.rows[1][0].end_us, (a + b) / 1e4, 1e-9);
}

TEST(Simulator, KernelTimeRisesWithContext) {
  double previous = 0;
  for (int context : {1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000}) {
    const DecodeBatch batch = uniform(4, context);
    const double t =
        simulate_metrics(plan_with("aiter-v1:max_split_per_batch=-1", batch), batch, mi355x(), datasheet_params())
            .kernel_us;
    EXPECT_GT(t, previous) << context;
    previous = t;
  }
}

TEST(Simulator, PlanIdlingThreeQuartersOfTheCusIsSlowerWhenPerCuBandwidthBinds) {
  // ATOM's max_split_per_batch=16 leaves 192 of 256 CUs idle at batch 4 (aiter-v1-planner spec §9a).
  const DecodeBatch batch = uniform(4, 100000);
  const Plan capped = plan_with("aiter-v1:max_split_per_batch=16", batch);
  const Plan full = plan_with("aiter-v1:max_split_per_batch=-1", batch);
  const Metrics slow = simulate_metrics(capped, batch, mi355x(), datasheet_params());
  const Metrics fast = simulate_metrics(full, batch, mi355x(), datasheet_params());
  EXPECT_EQ(slow.active_clusters, 64);
  EXPECT_EQ(fast.active_clusters, 256);
  EXPECT_GT(slow.kernel_us, 2.5 * fast.kernel_us);
}

TEST(Simulator, WorkedExampleReduceIsOneBlockPerTileAndHeadMergingAtMost65Partials) {
  // §9a with msb -1: 4 tiles of 64/65/65/65 partials, grid (16, 1, 4); 64 blocks on 64 CUs run at beta_cu.
  const DecodeBatch batch = uniform(4, 100000);
  const CostParams p = datasheet_params();
  const Prediction pr = simulate(plan_with("aiter-v1:max_split_per_batch=-1", batch), batch, mi355x(), p);
  ASSERT_EQ(pr.timeline.reduce.size(), 4u);
  for (const ReduceBox& r : pr.timeline.reduce) {
    EXPECT_EQ(r.heads, 16);
    EXPECT_EQ(r.block, 16 * r.tile);
    EXPECT_TRUE(r.massive);
  }
  const double bytes = 65 * (4.0 * 512 + 4) + 2.0 * 512;
  EXPECT_NEAR(pr.metrics.reduce_us, p.reduce_block_us + bytes / (p.beta_cu_gbps * 1e3), 1e-9);
}

TEST(Simulator, MetricsAddUp) {
  const DecodeBatch batch = uniform(4, 100000);
  const CostParams p = datasheet_params();
  const Metrics m = simulate_metrics(plan_with("aiter-v1:max_split_per_batch=-1", batch), batch, mi355x(), p);
  EXPECT_DOUBLE_EQ(m.kernel_us, m.stage1_us + m.reduce_us);
  EXPECT_DOUBLE_EQ(m.total_us, m.kernel_us + p.launch_us + p.reduce_launch_us + p.planner_us);
  EXPECT_EQ(m.num_works, 259);
  EXPECT_EQ(m.num_partials, 259);
  EXPECT_EQ(m.splits_per_request, (std::vector<int>{64, 65, 65, 65}));
  EXPECT_DOUBLE_EQ(m.kv_bytes, 4 * 100000 * kFp8KvBytesPerToken);
  EXPECT_DOUBLE_EQ(m.achieved_tbps, m.kv_bytes / m.kernel_us / 1e6);
}

TEST(Simulator, PlanWithoutPartialsHasNoReduceStage) {
  const DecodeBatch batch = uniform(256, 4000);
  const CostParams p = datasheet_params();
  const Prediction pr = simulate(plan_with("aiter-v1", batch), batch, mi355x(), p);
  EXPECT_EQ(pr.metrics.reduce_us, 0);
  EXPECT_TRUE(pr.timeline.reduce.empty());
  EXPECT_DOUBLE_EQ(pr.metrics.total_us, pr.metrics.kernel_us + p.launch_us + p.planner_us);
}

TEST(Simulator, EqualWorksOnEveryClusterKeepThemAllBusy) {
  const Metrics m = simulate_metrics(one_work_per_cluster(256, 5000), uniform(256, 5000), mi355x(), datasheet_params());
  EXPECT_NEAR(m.occupancy, 1.0, 1e-12);
}

TEST(Simulator, CriticalPathIsTheLongestClusterWhenNothingIsSplit) {
  const Metrics m = simulate_metrics(one_work_per_cluster(8, 5000), uniform(8, 5000), mi355x(), datasheet_params());
  EXPECT_DOUBLE_EQ(m.critical_path_us, m.stage1_us);
}

TEST(Simulator, CriticalPathNeverExceedsTheKernelTime) {
  const DecodeBatch batch = uniform(4, 100000);
  const Metrics m =
      simulate_metrics(plan_with("aiter-v1:max_split_per_batch=16", batch), batch, mi355x(), datasheet_params());
  EXPECT_LE(m.critical_path_us, m.kernel_us + 1e-9);
  EXPECT_GT(m.critical_path_us, m.stage1_us);
}

// A grid plan of `blocks` equal workgroups (one per request), launch order = request order.
Plan grid_plan(int blocks, int tokens, int heads = 16) {
  Plan p = one_work_per_cluster(blocks, tokens, heads);
  p.kernel = KernelKind::grid;
  return p;
}

TEST(Simulator, GridTwiceTheCusRunsInTwoWaves) {
  CostParams p = datasheet_params();
  const Metrics one_wave = simulate_metrics(grid_plan(256, 4000), uniform(256, 4000), mi355x(), p);
  const Metrics two_waves = simulate_metrics(grid_plan(512, 4000), uniform(512, 4000), mi355x(), p);
  EXPECT_NEAR(two_waves.stage1_us, 2 * one_wave.stage1_us, 1e-9 * two_waves.stage1_us);
}

TEST(Simulator, GridWithTwoSlotsPerCuRunsOneWaveAtTheDeviceBound) {
  CostParams p = datasheet_params();
  p.grid_occupancy = 2;
  const double bytes = 4000 * kFp8KvBytesPerToken + final_output_bytes(16);
  const Prediction pr = simulate(grid_plan(512, 4000), uniform(512, 4000), mi355x(), p);
  EXPECT_EQ(pr.timeline.num_clusters, 512);
  EXPECT_EQ(pr.timeline.rows_per_cu, 2);
  EXPECT_NEAR(pr.metrics.stage1_us, p.t_fix_us + p.grid_block_us + 512 * bytes / (p.b_hbm_tbps * 1e6),
              1e-9 * pr.metrics.stage1_us);
}

TEST(Simulator, GridSpreadsTheFirstWorkgroupsOverDistinctCus) {
  CostParams p = datasheet_params();
  p.grid_occupancy = 2;
  const Prediction pr = simulate(grid_plan(3, 4000), uniform(3, 4000), mi355x(), p);
  EXPECT_EQ(pr.metrics.active_clusters, 3);
  EXPECT_EQ(pr.timeline.num_clusters, 512);
  EXPECT_EQ(pr.timeline.rows[0].size(), 1u);  // CU 0 slot 0
  EXPECT_EQ(pr.timeline.rows[2].size(), 1u);  // CU 1 slot 0
  EXPECT_EQ(pr.timeline.rows[1].size(), 0u);  // CU 0 slot 1 stays free
}

TEST(Simulator, GridStreamFactorSlowsAGridWorkAloneButNotTheSharedLimit) {
  // One grid workgroup alone streams at beta / f; 512 of them at the device bound move the same bytes as before.
  CostParams p = datasheet_params();
  const double bytes = 4000 * kFp8KvBytesPerToken + final_output_bytes(16);
  p.grid_stream_factor = 1.25;
  const Metrics alone = simulate_metrics(grid_plan(1, 4000), uniform(1, 4000), mi355x(), p);
  EXPECT_NEAR(alone.stage1_us, p.t_fix_us + p.grid_block_us + 1.25 * bytes / (p.beta_cu_gbps * 1e3),
              1e-9 * alone.stage1_us);
  p.grid_occupancy = 2;
  const Metrics bound = simulate_metrics(grid_plan(512, 4000), uniform(512, 4000), mi355x(), p);
  EXPECT_NEAR(bound.stage1_us, p.t_fix_us + p.grid_block_us + 512 * bytes / (p.b_hbm_tbps * 1e6),
              1e-9 * bound.stage1_us);
}

TEST(Simulator, GridStreamFactorLeavesPersistentPlansAlone) {
  CostParams p = datasheet_params();
  const Metrics before = simulate_metrics(one_work_per_cluster(8, 50000, 128), uniform(8, 50000, 128), mi355x(), p);
  p.grid_stream_factor = 1.5;
  const Metrics after = simulate_metrics(one_work_per_cluster(8, 50000, 128), uniform(8, 50000, 128), mi355x(), p);
  EXPECT_DOUBLE_EQ(after.stage1_us, before.stage1_us);
  // The same works on a grid (128 heads: compute-bound) stream and compute f times slower: the part past the fixed
  // costs grows linearly with f.
  const auto grid_us = [&](double f) {
    p.grid_stream_factor = f;
    return simulate_metrics(grid_plan(8, 50000, 128), uniform(8, 50000, 128), mi355x(), p).stage1_us;
  };
  EXPECT_GT(grid_us(1.5), grid_us(1));
  EXPECT_NEAR(grid_us(2) - grid_us(1), 2 * (grid_us(1.5) - grid_us(1)), 1e-9 * grid_us(2));
  // A class's own value takes the place of the global one.
  const double global_2 = grid_us(2);
  p.grid_stream_factor = 1;
  for (const KernelClass& c : kernel_classes()) p.classes[static_cast<size_t>(c.id)].grid_stream_factor = 2;
  EXPECT_DOUBLE_EQ(simulate_metrics(grid_plan(8, 50000, 128), uniform(8, 50000, 128), mi355x(), p).stage1_us, global_2);
}

TEST(Simulator, GridOccupancyCountsEveryCuOfTheGpu) {
  const Metrics m = simulate_metrics(grid_plan(64, 4000), uniform(64, 4000), mi355x(), datasheet_params());
  EXPECT_NEAR(m.occupancy, 0.25, 1e-12);
}

TEST(Simulator, GridPlanSkipsThePlannerCost) {
  const CostParams p = datasheet_params();
  const Metrics m = simulate_metrics(grid_plan(4, 4000), uniform(4, 4000), mi355x(), p);
  EXPECT_DOUBLE_EQ(m.total_us, m.kernel_us + p.launch_us);
}

TEST(Simulator, RejectsAWorkListThatDoesNotEndAtTheWorkCount) {
  Plan plan = one_work_per_cluster(2, 1000);
  plan.work_indptr[2] = 1;
  EXPECT_THROW(simulate(plan, uniform(2, 1000), mi355x(), datasheet_params()), InputError);
}

TEST(Simulator, RejectsParametersOutOfRange) {
  CostParams p = datasheet_params();
  p.b_hbm_tbps = 0;
  EXPECT_THROW(simulate(one_work_per_cluster(1, 10), uniform(1, 10), mi355x(), p), InputError);
}

TEST(Simulator, MetricsOnlyEqualsTheFullSimulation) {
  const DecodeBatch batch = uniform(7, 30000);
  const Plan plan = plan_with("aiter-v1", batch);
  EXPECT_EQ(simulate_metrics(plan, batch, mi355x(), datasheet_params()),
            simulate(plan, batch, mi355x(), datasheet_params()).metrics);
}

}  // namespace
}  // namespace mlasim::sim
