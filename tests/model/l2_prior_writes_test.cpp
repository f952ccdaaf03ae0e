// The law of what the ops before an attention wrote and read into L2 costs its stage 1 (model/l2_prior_writes.h):
// its arithmetic on ops whose answer is known, and the properties the probes found (order matters, old writes cost
// nothing, the cost saturates).
#include "mlasim/model/l2_prior_writes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mlasim/model/gpu.h"

namespace mlasim {
namespace {

const L2PriorWrites kLaw{0.01, 10, 0.5, 1.5, 40};

TEST(L2PriorWrites, WritesWithNothingAfterCostTheirRateAndTheirOwnLaterChunks) {
  // gamma 0: nothing after a chunk weighs, so W MB cost W x us_per_mb.
  EXPECT_NEAR(l2_prior_writes_us(std::vector<OpBytes>{{0, 20}}, {0.01, 10, 0, 1.5, 40}), 0.2, 1e-12);
  // gamma 0.5: chunk k of 40 has (39 - k) chunks' writes after it, weighed by gamma.
  double expected = 0;
  for (int k = 0; k < kL2PriorWritesChunks; ++k) expected += 0.5 * 0.01 * std::exp((39 - k) * 0.5 * 0.5 / 10);
  EXPECT_NEAR(l2_prior_writes_us(std::vector<OpBytes>{{0, 20}}, kLaw), expected, 1e-12);
  // A read alone costs nothing.
  EXPECT_EQ(l2_prior_writes_us(std::vector<OpBytes>{{32, 0}}, kLaw), 0);
}

TEST(L2PriorWrites, WritesWithReadsAfterThemCostMoreThanTheSameWritesLast) {
  const std::vector<OpBytes> fill_then_read = {{0, 16}, {16, 0}}, read_then_fill = {{16, 0}, {0, 16}};
  EXPECT_GT(l2_prior_writes_us(fill_then_read, kLaw), 2 * l2_prior_writes_us(read_then_fill, kLaw));
  // The read then the fill costs what the fill alone does: reads before writes weigh nothing.
  EXPECT_NEAR(l2_prior_writes_us(read_then_fill, kLaw), l2_prior_writes_us(std::vector<OpBytes>{{0, 16}}, kLaw), 1e-12);
}

TEST(L2PriorWrites, WritesWithMoreThanCapTouchedAfterThemCostNothing) {
  // 8 MB written, then 48 MB read: every written chunk has more than 40 MB touched after it.
  EXPECT_EQ(l2_prior_writes_us(std::vector<OpBytes>{{0, 8}, {48, 0}}, kLaw), 0);
  // Ops before the one that takes the traffic past cap change nothing.
  const std::vector<OpBytes> near = {{0, 4}, {30, 0}}, with_old = {{0, 64}, {50, 0}, {0, 4}, {30, 0}};
  EXPECT_NEAR(l2_prior_writes_us(with_old, kLaw), l2_prior_writes_us(near, kLaw), 1e-12);
}

TEST(L2PriorWrites, TheCostSaturates) {
  EXPECT_EQ(l2_prior_writes_us(std::vector<OpBytes>{{0, 24}, {32, 0}}, kLaw), 1.5);
}

TEST(L2PriorWrites, AProfileWithoutTheLawCostsNothing) {
  CostParams p;
  EXPECT_FALSE(l2_prior_writes_of(p).known());
  EXPECT_EQ(l2_prior_writes_us(std::vector<OpBytes>{{0, 24}, {32, 0}}, l2_prior_writes_of(p)), 0);
  p.l2_prior_writes_us_per_mb = 0.01;
  p.l2_prior_writes_rho_mb = 10;
  p.l2_prior_writes_max_us = 1.5;
  EXPECT_FALSE(l2_prior_writes_of(p).known());  // no cap
  p.l2_prior_writes_cap_mb = 40;
  EXPECT_TRUE(l2_prior_writes_of(p).known());
  // The H100's profile carries the law fitted to its grid probe.
  EXPECT_TRUE(l2_prior_writes_of(cost_params_for(load_gpu("h100"))).known());
}

TEST(L2PriorWrites, AClassWithItsOwnLawScalesItsCostWithTheClustersOfAnUnsplitPlan) {
  CostParams p;
  p.l2_prior_writes_us_per_mb = 0.01;
  p.l2_prior_writes_rho_mb = 10;
  p.l2_prior_writes_max_us = 1.5;
  p.l2_prior_writes_cap_mb = 40;
  constexpr KernelClassId kPair = KernelClassId::wgmma_bf16_pair;
  // Without values of its own a class takes the GPU's law, and says so.
  bool own = true;
  const L2PriorWrites global = l2_prior_writes_of(p, kPair, 32, false, &own);
  EXPECT_FALSE(own);
  EXPECT_EQ(global.us_per_mb, 0.01);
  EXPECT_EQ(global.max_us, 1.5);
  set_cost_param(p, "wgmma-bf16-pair.prior_writes_us_per_mb_per_cluster", 0.001);
  set_cost_param(p, "wgmma-bf16-pair.prior_writes_rho_mb", 20);
  set_cost_param(p, "wgmma-bf16-pair.prior_writes_gamma", 1);
  set_cost_param(p, "wgmma-bf16-pair.prior_writes_cap_mb", 60);
  const L2PriorWrites on16 = l2_prior_writes_of(p, kPair, 16, false, &own);
  EXPECT_TRUE(own);
  EXPECT_DOUBLE_EQ(on16.us_per_mb, 0.016);
  EXPECT_EQ(on16.rho_mb, 20);
  EXPECT_EQ(on16.gamma, 1);
  EXPECT_EQ(on16.cap_mb, 60);
  EXPECT_TRUE(std::isinf(on16.max_us));  // no saturation
  // Twice the clusters, twice the cost of the same ops, past where the GPU's law saturates.
  const std::vector<OpBytes> layer = {{0, 24}, {32, 0}};
  const double c16 = l2_prior_writes_us(layer, on16);
  EXPECT_GT(c16, 1.5);
  EXPECT_NEAR(l2_prior_writes_us(layer, l2_prior_writes_of(p, kPair, 32, false)), 2 * c16, 1e-9);
  // A split plan, which the class's law did not measure, and another class take the GPU's law.
  EXPECT_EQ(l2_prior_writes_of(p, kPair, 64, true, &own).us_per_mb, 0.01);
  EXPECT_FALSE(own);
  EXPECT_EQ(l2_prior_writes_of(p, KernelClassId::wgmma_bf16, 64, false).us_per_mb, 0.01);
  // No cluster, no own law.
  EXPECT_EQ(l2_prior_writes_of(p, kPair, 0, false).us_per_mb, 0.01);
  // The H200's 128-head class carries the law of its batch probe (data/measurements/h200/l2_batch).
  const CostParams h200 = cost_params_for(load_gpu("h200"));
  l2_prior_writes_of(h200, kPair, 32, false, &own);
  EXPECT_TRUE(own);
  l2_prior_writes_of(h200, KernelClassId::wgmma_bf16, 32, false, &own);
  EXPECT_FALSE(own);
}

// A copy's law takes its cost per MB written from the profile's per MB copied: the copy-batch probe's 32 MiB copy
// paid about twice what its 16 MiB one did after the same q prep.
TEST(L2PriorWrites, ACopysLawScalesItsCostWithTheMegabytesItCopies) {
  CostParams p;
  EXPECT_FALSE(l2_copy_prior_writes_of(p, 16).known());
  p.l2_copy_prior_writes_us_per_mb_per_copy_mb = 0.0005;
  p.l2_copy_prior_writes_rho_mb = 30;
  p.l2_copy_prior_writes_gamma = 1;
  EXPECT_FALSE(l2_copy_prior_writes_of(p, 16).known());  // no cap
  p.l2_copy_prior_writes_cap_mb = 100;
  const L2PriorWrites on16 = l2_copy_prior_writes_of(p, 16), on32 = l2_copy_prior_writes_of(p, 32);
  ASSERT_TRUE(on16.known());
  EXPECT_DOUBLE_EQ(on16.us_per_mb, 0.008);
  EXPECT_EQ(on16.rho_mb, 30);
  EXPECT_EQ(on16.gamma, 1);
  EXPECT_EQ(on16.cap_mb, 100);
  EXPECT_TRUE(std::isinf(on16.max_us));  // no saturation
  const std::vector<OpBytes> q_prep = {{0, 8}, {8, 8}, {8, 4}};
  EXPECT_NEAR(l2_prior_writes_us(q_prep, on32), 2 * l2_prior_writes_us(q_prep, on16), 1e-12);
  EXPECT_FALSE(l2_copy_prior_writes_of(p, 0).known());  // a copy of nothing: no law
  // The H200's profile carries the law fitted to its copy-batch probe; the H100's has none.
  EXPECT_TRUE(l2_copy_prior_writes_of(cost_params_for(load_gpu("h200")), 16).known());
  EXPECT_FALSE(l2_copy_prior_writes_of(cost_params_for(load_gpu("h100")), 16).known());
}

}  // namespace
}  // namespace mlasim
