// The L2 hits of folded head groups (sim/src/sibling_reads.h): a group that reads a request's KV at the same time
// as its sibling, or shortly after it, reads from the L2; one that reads it long after reads from memory.
#include <gtest/gtest.h>

#include "mlasim/sim/simulator.h"

namespace mlasim::sim {
namespace {

constexpr double kBytesPerToken = 576.0;  // fp8 KV

const Gpu& h100() {
  static const Gpu gpu = load_gpu("h100");
  return gpu;
}

// Datasheet defaults with every timely sibling read hitting the L2 (fold_reread_fraction 0) within a window of
// `window` L2 sizes.
CostParams params(double window) {
  CostParams p = default_cost_params(h100());
  p.fold_reread_fraction = 0;
  p.fold_l2_window = window;
  return p;
}

// One request of `tokens` KV tokens and 32 heads folded into `groups` groups of 32 / groups heads, every group one
// final work over the whole KV; `lists[c]` are the groups cluster c runs, in order.
Plan folded(int groups, int tokens, const std::vector<std::vector<int>>& lists) {
  Plan p;
  p.kernel = KernelKind::persistent;
  p.derived.num_clusters = static_cast<int>(lists.size());
  p.derived.num_heads_eff = 32 / groups;
  p.derived.num_batches_eff = groups;
  p.derived.qk_batch_ratio = groups;
  p.num_requests = 1;
  p.num_heads = 32;
  p.reduce_indptr.assign(static_cast<size_t>(groups) + 1, 0);
  p.reduce_final_map.assign(static_cast<size_t>(groups), {kUnwritten, kUnwritten});
  for (const std::vector<int>& list : lists) {
    p.work_indptr.push_back(static_cast<int>(p.works.size()));
    for (int g : list) p.works.push_back(WorkInfo{g, -1, g, g + 1, 0, tokens, 0, 0});
  }
  p.work_indptr.push_back(static_cast<int>(p.works.size()));
  p.set_num_tiles(groups);
  return p;
}

DecodeBatch one_request(int tokens) {
  DecodeBatch b = DecodeBatch::uniform(1, tokens);
  b.q_heads = 32;
  return b;
}

double kv_bytes(int tokens) { return tokens * kBytesPerToken; }

TEST(SiblingReads, GroupsSideBySideReadTheKvFromMemoryOnce) {
  // Two groups start together on two clusters: the reads of each token fall at the same moment and split the one
  // miss, so each group pays half of the request's KV, and stage 1 is shorter than with every read a miss.
  const int tokens = 200000;
  const Plan plan = folded(2, tokens, {{0}, {1}});
  const Metrics shared = simulate_metrics(plan, one_request(tokens), h100(), params(1.0));
  EXPECT_NEAR(shared.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
  CostParams every_read_misses = params(1.0);
  every_read_misses.fold_reread_fraction = 1;
  const Metrics missed = simulate_metrics(plan, one_request(tokens), h100(), every_read_misses);
  EXPECT_NEAR(missed.read_bytes, 2 * kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
  EXPECT_LT(shared.stage1_us, 0.75 * missed.stage1_us);
}

TEST(SiblingReads, FourGroupsSideBySidePayAQuarterEach) {
  const int tokens = 100000;
  const Metrics m = simulate_metrics(folded(4, tokens, {{0}, {1}, {2}, {3}}), one_request(tokens), h100(), params(1));
  EXPECT_NEAR(m.read_bytes, kv_bytes(tokens), 1e-9 * kv_bytes(tokens));
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
