// The worked examples of the planner specification (MI355X: gfx950, 256 CUs, 16 heads, fp8, page 1, qlen 1).
#include <gtest/gtest.h>

#include <numeric>

#include "mlasim/sim/aiter_v1_planner.h"

namespace mlasim::sim {
namespace {

AiterV1Args mi355x(std::vector<int> kv_lens, int msb) {
  AiterV1Args a;
  a.arch = Arch::gfx950;
  a.num_cu = 256;
  a.max_split_per_batch = msb;
  a.seqlens_kv_indptr = {0};
  a.seqlens_qo_indptr = {0};
  for (int len : kv_lens) {
    a.seqlens_kv_indptr.push_back(a.seqlens_kv_indptr.back() + len);
    a.seqlens_qo_indptr.push_back(a.seqlens_qo_indptr.back() + 1);
    a.kv_last_page_lens.push_back(1);
  }
  return a;
}

std::vector<int32_t> iota(int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(AiterV1Example, Batch4x100kMsb16UsesSixtyFourClusters) {
  const Plan p = plan_aiter_v1(mi355x({100000, 100000, 100000, 100000}, 16));
  EXPECT_EQ(p.derived.num_splits, 64);
  EXPECT_EQ(p.model.sum_blocks, 25064);
  EXPECT_EQ(p.model.payload_blocks, 408);
  EXPECT_EQ(p.num_works(), 67);
  EXPECT_EQ(p.active_clusters(), 64);
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 16, 33, 50, 67}));
  EXPECT_EQ(p.reduce_partial_map, iota(67));
  // Cluster 15 closes batch 0 with [94080, 100000) and opens batch 1 with 6 granules.
  EXPECT_EQ(p.works[15], (WorkInfo{0, 15, 0, 1, 94080, 100000, 0, 0}));
  EXPECT_EQ(p.works[16], (WorkInfo{1, 16, 1, 2, 100000, 100096, 100000 * 2 - 100096, 0}));
  EXPECT_EQ(p.work_indptr[16], 17);
  EXPECT_EQ(p.work_indptr[64], 67);
  EXPECT_EQ(p.work_indptr[256], 67);
  EXPECT_EQ(p.splits_per_request(), (std::vector<int>{16, 17, 17, 17}));
}

TEST(AiterV1Example, Batch4x100kAutoUsesEveryCluster) {
  const Plan p = plan_aiter_v1(mi355x({100000, 100000, 100000, 100000}, -1));
  EXPECT_EQ(p.model.payload_blocks, 114);
  EXPECT_EQ(p.num_works(), 259);
  EXPECT_EQ(p.active_clusters(), 256);
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 64, 129, 194, 259}));
  EXPECT_EQ(p.works[63], (WorkInfo{0, 63, 0, 1, 98784, 100000, 0, 0}));  // last 76 granules of batch 0
  EXPECT_EQ(p.work_indptr[63], 63);
  EXPECT_EQ(p.work_indptr[64], 65);
  EXPECT_EQ(p.work_indptr[256], 259);
  EXPECT_EQ(p.splits_per_request(), (std::vector<int>{64, 65, 65, 65}));
}

TEST(AiterV1Example, TwoRaggedRequestsAuto) {
  const Plan p = plan_aiter_v1(mi355x({3000, 70000}, -1));
  EXPECT_EQ(p.model.sum_blocks, 4595);
  EXPECT_EQ(p.model.payload_blocks, 34);
  EXPECT_EQ(p.num_works(), 255);
  EXPECT_EQ(p.works[10], (WorkInfo{0, 10, 0, 1, 2880, 3000, 0, 0}));
  EXPECT_EQ(p.works[254], (WorkInfo{1, 254, 1, 2, 72984, 73000, 0, 0}));  // a single-granule closing fragment
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 11, 255}));
  EXPECT_EQ(p.work_indptr[255], 255);
  EXPECT_EQ(p.work_indptr[256], 255);
}

TEST(AiterV1Example, TwoRaggedRequestsMsb16) {
  const Plan p = plan_aiter_v1(mi355x({3000, 70000}, 16));
  EXPECT_EQ(p.model.payload_blocks, 160);
  EXPECT_EQ(p.num_works(), 33);
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 2, 33}));
  EXPECT_EQ(p.works[1], (WorkInfo{0, 1, 0, 1, 2304, 3000, 0, 0}));
  EXPECT_EQ(p.works[2], (WorkInfo{1, 2, 1, 2, 3000, 4344, 73000 - 4344, 0}));
}

TEST(AiterV1Example, SingleRequestSplitCountsMatchPublishedTable) {
  // aiter PR #4899's MI355X table, "OFF" column: bs=1 split counts for ctx 512 .. 1M.
  const std::vector<int> ctx = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576};
  const std::vector<int> want = {32, 64, 128, 128, 171, 205, 228, 241, 249, 253, 255, 256};
  for (size_t i = 0; i < ctx.size(); ++i) EXPECT_EQ(plan_aiter_v1(mi355x({ctx[i]}, -1)).num_works(), want[i]) << ctx[i];
}

TEST(AiterV1Example, AdaptiveSqrtRuleMatchesPublishedOnColumn) {
  const std::vector<int> ctx = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  const std::vector<int> want = {6, 8, 12, 19, 27, 38, 54, 76, 108};
  for (size_t i = 0; i < ctx.size(); ++i) {
    AiterV1Args a = mi355x({ctx[i]}, -1);
    a.budget = SplitBudget::adaptive_sqrt;
    EXPECT_EQ(plan_aiter_v1(a).num_works(), want[i]) << ctx[i];
  }
}

TEST(AiterV1Example, MachineWidthRuleEqualsFlatPlans) {
  for (int ctx : {100, 700, 3000, 50000}) {
    AiterV1Args a = mi355x({ctx, ctx / 2 + 1}, -1);
    const Plan flat = plan_aiter_v1(a);
    a.budget = SplitBudget::machine_width;
    const Plan width = plan_aiter_v1(a);
    EXPECT_EQ(width.works, flat.works) << ctx;
  }
}

TEST(AiterV1Example, BatchOf256UniformRequestsIsNeverSplit) {
  const Plan p = plan_aiter_v1(mi355x(std::vector<int>(256, 8192), -1));
  EXPECT_EQ(p.num_works(), 256);
  EXPECT_EQ(p.num_partials(), 0);
}

}  // namespace
}  // namespace mlasim::sim
