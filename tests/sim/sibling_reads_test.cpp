// The L2 hits of folded head groups (sim/src/sibling_reads.h): a group that reads a request's KV at the same time
// as its sibling, or shortly after it, reads from the L2; one that reads it long after reads from memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mlasim/sim/kernel_choice.h"
#include "mlasim/sim/simulator.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

using testing::h100;
using testing::kFp8KvBytesPerToken;

// Datasheet defaults with every timely sibling read hitting the L2 (fold_reread_fraction 0) within a window of
// `window` L2 sizes.
CostParams params(double window) {
  CostParams p = default_cost_params(h100());
  p.fold_reread_fraction = 0;
  p.fold_l2_window = window;
  return p;
}

// Requests of `tokens` KV tokens and 32 heads folded into `groups` groups of 32 / groups heads; `lists[c]` are the
// virtual batches cluster c runs, in order (virtual batch v: request v / groups, its group v % groups), each one
// final work over its request's whole KV.
Plan folded(int groups, int tokens, const std::vector<std::vector<int>>& lists) {
  Plan p;
  int batches = 0;
  for (const std::vector<int>& list : lists)
    for (int v : list) batches = std::max(batches, v + 1);
  p.kernel = KernelKind::persistent;
  p.derived.num_clusters = static_cast<int>(lists.size());
  p.derived.num_heads_eff = 32 / groups;
  p.derived.num_batches_eff = batches;
  p.derived.qk_batch_ratio = groups;
  p.num_requests = batches / groups;
  p.num_heads = 32;
  p.reduce_indptr.assign(static_cast<size_t>(batches) + 1, 0);
  p.reduce_final_map.assign(static_cast<size_t>(batches), {kUnwritten, kUnwritten});
  for (const std::vector<int>& list : lists) {
    p.work_indptr.push_back(static_cast<int>(p.works.size()));
    for (int v : list) {
      const int r = v / groups;
      p.works.push_back(WorkInfo{v, -1, v, v + 1, r * tokens, (r + 1) * tokens, 0, 0});
    }
  }
  p.work_indptr.push_back(static_cast<int>(p.works.size()));
  p.set_num_tiles(batches);
  return p;
}

DecodeBatch requests(int n, int tokens) {
  DecodeBatch b = DecodeBatch::uniform(n, tokens);
  b.q_heads = 32;
  return b;
}

DecodeBatch one_request(int tokens) { return requests(1, tokens); }

double kv_bytes(int tokens) { return tokens * kFp8KvBytesPerToken; }

TEST(SiblingReads, GroupsSideBySideReadTheKvFromMemoryOnce) {
  // Two groups start together on two clusters: the reads of each token fall at the same moment and split the one
  // miss, so each group reads half of the request's KV from memory.
  const int tokens = 200000;
  const Plan plan = folded(2, tokens, {{0}, {1}});
  const Metrics shared = simulate_metrics(plan, one_request(tokens), h100(), params(1.0));
  EXPECT_NEAR(shared.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
  CostParams every_read_misses = params(1.0);
  every_read_misses.fold_reread_fraction = 1;
  const Metrics missed = simulate_metrics(plan, one_request(tokens), h100(), every_read_misses);
  EXPECT_NEAR(missed.read_bytes, 2 * kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
  // Two SMs stream at their own rate either way: an L2 hit still costs the SM its stream.
  EXPECT_NEAR(shared.stage1_us, missed.stage1_us, 1e-9 * missed.stage1_us);
}

TEST(SiblingReads, HitsRelieveTheDeviceBandwidthWhereItBinds) {
  // 64 requests, their two groups side by side on 128 clusters: every SM streaming from memory would share the
  // device's bandwidth; with half of the reads served by the L2 the memory carries half the load, and stage 1 is
  // shorter, but no shorter than each SM streaming its whole KV alone.
  const int tokens = 50000;
  std::vector<std::vector<int>> lists;
  for (int v = 0; v < 128; ++v) lists.push_back({v});
  const Plan plan = folded(2, tokens, lists);
  CostParams p = params(1.0);
  p.beta_cu_gbps = 100;  // 128 SMs alone would stream 12.8 TB/s: the device's bandwidth binds
  CostParams every_read_misses = p;
  every_read_misses.fold_reread_fraction = 1;
  const Metrics shared = simulate_metrics(plan, requests(64, tokens), h100(), p);
  const Metrics missed = simulate_metrics(plan, requests(64, tokens), h100(), every_read_misses);
  EXPECT_NEAR(shared.read_bytes, 64 * kv_bytes(tokens), 1e-9 * 64 * kv_bytes(tokens));
  EXPECT_LT(shared.stage1_us, 0.6 * missed.stage1_us);
  const KernelClassParams cp = p.resolved(auto_kernel_class(plan, requests(64, tokens), h100()));
  EXPECT_GT(shared.stage1_us, kv_bytes(tokens) / (cp.beta_gbps * 1e3));
}

TEST(SiblingReads, FourGroupsSideBySidePayAQuarterEach) {
  const int tokens = 100000;
  const Metrics m = simulate_metrics(folded(4, tokens, {{0}, {1}, {2}, {3}}), one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
}

TEST(SiblingReads, PairsInTurnPayOneMissPerPair) {
  // Four groups on two clusters: groups 0 and 1 side by side, then groups 2 and 3 side by side after them. 400000
  // tokens are far more than the L2 holds between the two pairs: each pair reads the KV from memory once, two reads
  // in all (the side-by-side share of every work, fold_l2_window 0, would read it once).
  const int tokens = 400000;
  const Plan plan = folded(4, tokens, {{0, 2}, {1, 3}});
  const Metrics m = simulate_metrics(plan, one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, 2 * kv_bytes(tokens), 0.005 * kv_bytes(tokens));
  const Metrics one_share = simulate_metrics(plan, one_request(tokens), h100(), params(0));
  EXPECT_NEAR(one_share.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
}

TEST(SiblingReads, AGroupSplitInTwoMeetsItsSiblingInEachHalf) {
  // Group 0 in two works of half the KV on clusters 0 and 1, group 1 whole on cluster 2, all starting together. The
  // first half is read by both groups at the same moments (one miss); the second half by group 0's second work at
  // once and by group 1 half a request later, long after the L2 let it go (two misses): 1.5 reads of the KV.
  const int tokens = 400000;
  Plan p = folded(2, tokens, {{0}, {0}, {1}});
  p.works[0].kv_end = tokens / 2;
  p.works[1].kv_start = tokens / 2;
  const Metrics m = simulate_metrics(p, one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, 1.5 * kv_bytes(tokens), 0.005 * kv_bytes(tokens));
}

TEST(SiblingReads, ThirtyTwoGroupsSideBySidePayAThirtySecondEach) {
  const int tokens = 100000;
  std::vector<std::vector<int>> lists;
  for (int v = 0; v < 32; ++v) lists.push_back({v});
  const Metrics m = simulate_metrics(folded(32, tokens, lists), one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
}

TEST(SiblingReads, AWorkOutsideTheBatchReadsAllOfItsKv) {
  // A work whose virtual batch names no request of the batch (an unchecked plan) shares nothing: it reads its whole
  // range, and its sibling reads alone.
  const int tokens = 100000;
  Plan p = folded(2, tokens, {{0}, {1}});
  p.works[1].batch_idx = 1001;  // request 500 of a batch of 1
  const Metrics m = simulate_metrics(p, one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, 2 * kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
}

TEST(SiblingReads, AGroupThatFollowsLongAfterItsSiblingReadsFromMemory) {
  // One cluster runs the two groups in turn. 400000 tokens are 230 MB, over four L2 sizes of traffic between a
  // token's two reads: the second read misses (1 / (1 + 4.4^4) of it hits). 10000 tokens (5.8 MB) are a ninth of
  // an L2: the second read hits.
  const Metrics after_long = simulate_metrics(folded(2, 400000, {{0, 1}}), one_request(400000), h100(), params(1));
  EXPECT_NEAR(after_long.read_bytes, 2 * kv_bytes(400000), 0.005 * kv_bytes(400000));
  const Metrics after_short = simulate_metrics(folded(2, 10000, {{0, 1}}), one_request(10000), h100(), params(1));
  EXPECT_NEAR(after_short.read_bytes, kv_bytes(10000), 0.001 * kv_bytes(10000));
  // A window of four L2 sizes lets the long request's second read hit in part.
  const Metrics wide = simulate_metrics(folded(2, 400000, {{0, 1}}), one_request(400000), h100(), params(4));
  EXPECT_LT(wide.read_bytes, 1.7 * kv_bytes(400000));
}

TEST(SiblingReads, WithoutAWindowEveryGroupTakesTheSideBySideShare) {
  // fold_l2_window 0: R groups read (1 + (R - 1) f) / R of the KV each wherever they run (f: fold_reread_fraction).
  const int tokens = 400000;
  CostParams p = params(0);
  p.fold_reread_fraction = 0.5;
  const Metrics m = simulate_metrics(folded(2, tokens, {{0, 1}}), one_request(tokens), h100(), p);
  EXPECT_NEAR(m.read_bytes, 2 * kv_bytes(tokens) * (1 + 0.5) / 2, 1e-9 * kv_bytes(tokens));
}

TEST(SiblingReads, AHitCostsFoldRereadFractionOfTheRead) {
  const int tokens = 200000;
  CostParams p = params(1);
  p.fold_reread_fraction = 0.3;
  const Metrics m = simulate_metrics(folded(2, tokens, {{0}, {1}}), one_request(tokens), h100(), p);
  // Each group: half its read a miss, half a hit at 0.3.
  EXPECT_NEAR(m.read_bytes, 2 * kv_bytes(tokens) * (0.5 + 0.5 * 0.3), 1e-9 * kv_bytes(tokens));
}

}  // namespace
}  // namespace mlasim::sim
