// flashinfer-mla against split-policies.md section 4.3 I3 and worked example 5 P7 (transplanted to 256 SMs).
#include <gtest/gtest.h>

#include <set>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::mi355x;
using testing::plan_keeps_contract;
using testing::uniform;
using testing::work_tokens;

Plan plan(const DecodeBatch& batch, int clusters = 0) {
  return make_policy("flashinfer-mla")->plan({batch, mi355x(), clusters});
}

TEST(FlashInferMla, WorkedExampleP7A) {
  const DecodeBatch batch = uniform(4, 100000);
  const Plan p = plan(batch);
  EXPECT_EQ(p.kernel, KernelKind::persistent);
  EXPECT_EQ(p.num_work_lists(), 256);
  EXPECT_EQ(p.model.payload_blocks, 1792);  // f(cdiv(400000, 256) = 1563) = roundup(1563, 256)
  EXPECT_EQ(testing::pieces_per_request(p), (std::vector<int>{56, 56, 56, 56}));
  EXPECT_EQ(p.active_clusters(), 224);
  for (int c = 0; c < 256; ++c) EXPECT_LE(p.work_end(c) - p.work_begin(c), 1) << "cluster " << c;
  const std::vector<int64_t> tokens = work_tokens(p);
  const std::multiset<int64_t> sizes(tokens.begin(), tokens.end());
  EXPECT_EQ(sizes.count(1792), 220u);
  EXPECT_EQ(sizes.count(100000 - 55 * 1792), 4u);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferMla, WorkedExampleP7B) {
  const Plan p = plan(uniform(1, 8192));
  EXPECT_EQ(p.model.payload_blocks, 128);  // f(32)
  EXPECT_EQ(p.num_works(), 64);
  EXPECT_EQ(p.active_clusters(), 64);
  EXPECT_EQ(work_tokens(p), std::vector<int64_t>(64, 128));
}

TEST(FlashInferMla, ShortKvPerClusterUsesTheSmallLimits) {
  EXPECT_EQ(plan(uniform(1, 2048)).model.payload_blocks, 32);    // 8 tokens per cluster
  EXPECT_EQ(plan(uniform(1, 4096)).model.payload_blocks, 64);    // 16
  EXPECT_EQ(plan(uniform(1, 16384)).model.payload_blocks, 192);  // 64
}

TEST(FlashInferMla, TilesWithinTheLimitWriteTheOutput) {
  const Plan p = plan(uniform(256, 1000));
  EXPECT_EQ(p.num_partials(), 0);
  EXPECT_EQ(p.num_works(), 256);
}

TEST(FlashInferMla, CheapestClusterTakesTheNextChunk) {
  // 4 clusters, 1800 tokens: limit f(450) = 512. Chunks go to zero-cost clusters first, then to the cheapest.
  const DecodeBatch batch = [] {
    DecodeBatch b = uniform(3, 300);
    b.kv_lens = {1200, 300, 300};
    return b;
  }();
  const Plan p = plan(batch, 4);
  EXPECT_EQ(p.model.payload_blocks, 512);
  // Request 0: chunks of 512, 512, 176 on three empty clusters; request 1 (300) on the fourth; request 2 on
  // the cheapest, the one holding the 176-token chunk (2 x 64 + 176 = 304).
  EXPECT_EQ(p.num_works(), 5);
  EXPECT_EQ(p.active_clusters(), 4);
  int with_two = -1;
  for (int c = 0; c < 4; ++c)
    if (p.work_end(c) - p.work_begin(c) == 2) with_two = c;
  ASSERT_GE(with_two, 0);
  EXPECT_EQ(p.works[p.work_begin(with_two)].kv_pages(), 176);
  EXPECT_EQ(p.works[p.work_begin(with_two) + 1].batch_idx, 2);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferMla, Heads128RunOnClustersOfTwo) {
  const DecodeBatch batch = uniform(2, 50000, 128);
  const Plan p = plan(batch);
  EXPECT_EQ(p.num_work_lists(), 256);
  EXPECT_EQ(p.model.packed_qo_len_per_wg, 128);
  EXPECT_EQ(p.derived.qk_batch_ratio, 2);
  for (int c = 0; c < 256; c += 2) {
    ASSERT_EQ(p.work_end(c) - p.work_begin(c), p.work_end(c + 1) - p.work_begin(c + 1));
    for (int i = 0; i < p.work_end(c) - p.work_begin(c); ++i) {
      const WorkInfo& a = p.works[p.work_begin(c) + i];
      const WorkInfo& b = p.works[p.work_begin(c + 1) + i];
      EXPECT_EQ(a.kv_start, b.kv_start);
      EXPECT_EQ(a.batch_idx + 1, b.batch_idx);
    }
  }
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferMla, CausalTilesStopAtTheirDiagonal) {
  // 16 heads x 16 tokens = 256 rows: two 128-row cluster tiles. Tile 0 (tokens 0-7) reads kv - 16 + 8.
  const DecodeBatch batch = uniform(1, 1000, 16, 16);
  const Plan p = plan(batch);
  int64_t tile0_end = 0;
  for (const WorkInfo& w : p.works)
    if (w.qo_start < 8) tile0_end = std::max<int64_t>(tile0_end, w.kv_end);
  EXPECT_EQ(tile0_end, 992);
  EXPECT_EQ(p.model.sum_blocks, 992 + 1000);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
  DecodeBatch full = batch;
  full.causal = false;
  EXPECT_EQ(plan(full).model.sum_blocks, 2000);
}

TEST(FlashInferMla, RejectsPagedKv) {
  DecodeBatch batch = uniform(2, 1000);
  batch.page_size = 16;
  const auto e = input_error_of([&] { plan(batch); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(std::string(e->what()),
            "page_size: flashinfer-mla cuts KV at token granularity; page size must be 1, got 16");
}

TEST(FlashInferMla, HasNoKnobs) {
  const auto e = input_error_of([&] { make_policy("flashinfer-mla:limit=4"); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "policy");
}

}  // namespace
}  // namespace mlasim::sim
