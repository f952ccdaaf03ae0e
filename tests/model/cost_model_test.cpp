// CostParams: datasheet-derived defaults, profile overrides, keys and ranges.
#include "mlasim/model/cost_model.h"

#include <cmath>

#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

Gpu mi355x_without_params() {
  Gpu g = load_gpu("mi355x");
  g.params.clear();
  return g;
}

TEST(CostModel, HbmBandwidthIsTheDatasheetPeakTimesTheVendorEfficiency) {
  EXPECT_DOUBLE_EQ(cost_params_for(mi355x_without_params()).b_hbm_tbps, 8.0 * 0.75);
}

TEST(CostModel, NvidiaEfficiencyIsHigher) { EXPECT_DOUBLE_EQ(hbm_efficiency("nvidia"), 0.85); }

TEST(CostModel, BetaCuIsTheEvenShareOfTheEffectiveBandwidth) {
  EXPECT_DOUBLE_EQ(cost_params_for(mi355x_without_params()).beta_cu_gbps, 6000.0 / 256);
}

TEST(CostModel, FixedCostIsThePlannersOverheadOf256Fp8TokensAtBetaCu) {
  EXPECT_DOUBLE_EQ(cost_params_for(mi355x_without_params()).t_fix_us, 256 * 576 / (6000.0 / 256 * 1e3));
}

TEST(CostModel, ProfileParamsOverrideTheDefaults) {
  Gpu g = mi355x_without_params();
  g.params["t_fix_us"] = GpuParam{2.5, "fitted", "test"};
  EXPECT_DOUBLE_EQ(cost_params_for(g).t_fix_us, 2.5);
}

TEST(CostModel, DefaultsIgnoreProfileParams) {
  Gpu g = mi355x_without_params();
  g.params["t_fix_us"] = GpuParam{2.5, "fitted", "test"};
  EXPECT_DOUBLE_EQ(default_cost_params(g).t_fix_us, cost_params_for(mi355x_without_params()).t_fix_us);
}

TEST(CostModel, ProfileValueOutOfRangeNamesTheProfileKey) {
  Gpu g = mi355x_without_params();
  g.params["matrix_efficiency"] = GpuParam{1.5, "assumed", "test"};
  const auto e = input_error_of([&] { cost_params_for(g); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "gpu.params.matrix_efficiency");
}

TEST(CostModel, KeysFollowTheDeclarationOrder) {
  EXPECT_EQ(global_cost_param_keys(), (std::vector<std::string>{"t_fix_us",
                                                                "beta_cu_gbps",
                                                                "b_hbm_tbps",
                                                                "matrix_efficiency",
                                                                "launch_us",
                                                                "reduce_block_us",
                                                                "reduce_launch_us",
                                                                "planner_us",
                                                                "grid_block_us",
                                                                "grid_occupancy",
                                                                "bw_knee",
                                                                "stage_gap_us",
                                                                "second_kernel_us",
                                                                "reduce_beta_gbps",
                                                                "reduce_item_us",
                                                                "reduce_blocks_per_cu",
                                                                "reduce_wide_blocks_per_cu",
                                                                "fold_reread_fraction",
                                                                "fold_l2_window",
                                                                "persistent_cluster_us",
                                                                "gather_extra_read",
                                                                "compute_overlap_n",
                                                                "grid_stream_factor",
                                                                "l2_carry_us_per_mb",
                                                                "l2_carry_cap_mb",
                                                                "l2_carry_reread_evict",
                                                                "stream_kernel_us",
                                                                "stream_kernel_tbps",
                                                                "stream_write_tbps",
                                                                "events_overhead_us",
                                                                "events_kernel_overhead_us",
                                                                "l2_prior_writes_us_per_mb",
                                                                "l2_prior_writes_rho_mb",
                                                                "l2_prior_writes_gamma",
                                                                "l2_prior_writes_max_us",
                                                                "l2_prior_writes_cap_mb",
                                                                "l2_copy_prior_writes_us_per_mb_per_copy_mb",
                                                                "l2_copy_prior_writes_rho_mb",
                                                                "l2_copy_prior_writes_gamma",
                                                                "l2_copy_prior_writes_cap_mb",
                                                                "step_fuse_offset_us"}));
  // Then every class's fields, class by class.
  const auto& all = cost_param_keys();
  ASSERT_EQ(all.size(), global_cost_param_keys().size() + 15 * kernel_classes().size());
  EXPECT_EQ(all[global_cost_param_keys().size()], "portable-bf16.t_fix_us");
  EXPECT_EQ(all.back(), "grid-nonpersistent.policy_offset_carry");
}

TEST(CostModel, ClassParametersFallBackToTheGlobalOnes) {
  CostParams p;
  p.t_fix_us = 7;
  p.beta_cu_gbps = 30;
  set_cost_param(p, "wgmma-fp8.t_fix_us", 15);
  const KernelClassParams fp8 = p.resolved(KernelClassId::wgmma_fp8);
  EXPECT_DOUBLE_EQ(fp8.t_fix_us, 15);
  EXPECT_DOUBLE_EQ(fp8.beta_gbps, 30);
  EXPECT_DOUBLE_EQ(fp8.t_pass_us, 0);
  EXPECT_DOUBLE_EQ(fp8.reread_fraction, 1);
  EXPECT_DOUBLE_EQ(fp8.grid_stream_factor, 1);
  EXPECT_DOUBLE_EQ(fp8.policy_offset_carry, 1);  // a policy edit's ratio, unless measured otherwise
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16).t_fix_us, 7);
  p.grid_stream_factor = 1.1;
  set_cost_param(p, "portable-fp8.grid_stream_factor", 0.9);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_fp8).grid_stream_factor, 1.1);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::portable_fp8).grid_stream_factor, 0.9);
}

// The fp8 kernel's one-pass tiles are a class cut from it: what a profile sets for them is theirs, the rest is the
// wider class's value in effect (its own, else the global one), not the global one directly.
TEST(CostModel, AClassCutFromAnotherTakesItsValuesWhereUnset) {
  CostParams p;
  p.t_fix_us = 7;
  p.beta_cu_gbps = 30;
  set_cost_param(p, "wgmma-fp8.t_pass_us", 9);
  set_cost_param(p, "wgmma-fp8.reread_fraction", 0.8);
  set_cost_param(p, "wgmma-fp8.beta_gbps", 50);
  set_cost_param(p, "wgmma-fp8-onepass.beta_gbps", 120);
  const KernelClassParams one = p.resolved(KernelClassId::wgmma_fp8_onepass);
  EXPECT_DOUBLE_EQ(one.beta_gbps, 120);
  EXPECT_DOUBLE_EQ(one.t_pass_us, 9);
  EXPECT_DOUBLE_EQ(one.reread_fraction, 0.8);
  EXPECT_DOUBLE_EQ(one.t_fix_us, 7);  // neither sets it: the global one, through the wider class
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_fp8).beta_gbps, 50);
  EXPECT_DOUBLE_EQ(effective_cost_param(p, "wgmma-fp8-onepass.t_pass_us"), 9);
  EXPECT_TRUE(std::isnan(get_cost_param(p, "wgmma-fp8-onepass.t_pass_us")));
}

// A class's memory-curve knee: its own where the profile sets one (docs/validation.md §0.10), else the GPU's.
TEST(CostModel, AClassKneeOverridesTheGpusForThatClassAlone) {
  CostParams p;
  p.bw_knee = 2.5;
  set_cost_param(p, "wgmma-bf16.bw_knee", 4.3);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16).bw_knee, 4.3);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16_pair).bw_knee, 2.5);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_fp8).bw_knee, 2.5);
  // The GPU's knee may be 0 (the sharp limit); a class's, once set, is a curve.
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.bw_knee", 0), InputError);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.bw_knee", 65), InputError);
  // Part of the memory curve: not carried to another GPU with the kernel parameters.
  EXPECT_FALSE(is_kernel_param_key("wgmma-bf16.bw_knee"));
  EXPECT_TRUE(is_kernel_param_key("wgmma-bf16.beta_gbps"));
}

// A class's write-back exposure (sim/l2_writeback.h): 0, no write-back cost, unless a probe measured it on this GPU.
TEST(CostModel, AClassWritebackExposureIsZeroUnlessSetAndStaysTheGpus) {
  CostParams p;
  EXPECT_EQ(p.resolved(KernelClassId::wgmma_bf16).writeback_exposure, 0.0);
  set_cost_param(p, "wgmma-bf16.writeback_exposure", 1.2);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16).writeback_exposure, 1.2);
  EXPECT_EQ(p.resolved(KernelClassId::wgmma_bf16_pair).writeback_exposure, 0.0);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.writeback_exposure", -0.1), InputError);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.writeback_exposure", 4.5), InputError);
  EXPECT_FALSE(is_kernel_param_key("wgmma-bf16.writeback_exposure"));
  // Its share floor: 0 (the full exposure at any share) where not set, below 1, the target GPU's too.
  EXPECT_EQ(p.resolved(KernelClassId::wgmma_bf16).writeback_share_floor, 0.0);
  set_cost_param(p, "wgmma-bf16.writeback_share_floor", 0.5);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16).writeback_share_floor, 0.5);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.writeback_share_floor", 1.0), InputError);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16.writeback_share_floor", -0.1), InputError);
  EXPECT_FALSE(is_kernel_param_key("wgmma-bf16.writeback_share_floor"));
}

// A class's own prior-writes law (model/l2_prior_writes.h): 0, the GPU's law, unless a probe measured it; a response of
// the target GPU's L2, not carried over from another GPU.
TEST(CostModel, AClassPriorWritesLawIsZeroUnlessSetAndStaysTheGpus) {
  CostParams p;
  for (const char* field : {"us_per_mb_per_cluster", "rho_mb", "gamma", "cap_mb"}) {
    const std::string key = std::string("wgmma-bf16-pair.prior_writes_") + field;
    EXPECT_TRUE(std::isnan(get_cost_param(p, key))) << key;  // not set
    EXPECT_EQ(effective_cost_param(p, key), 0.0) << key;
    EXPECT_FALSE(is_kernel_param_key(key)) << key;
    EXPECT_THROW(set_cost_param(p, key, -1), InputError) << key;
  }
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16-pair.prior_writes_gamma", 17), InputError);
  set_cost_param(p, "wgmma-bf16-pair.prior_writes_us_per_mb_per_cluster", 0.0003);
  EXPECT_DOUBLE_EQ(p.resolved(KernelClassId::wgmma_bf16_pair).prior_writes_us_per_mb_per_cluster, 0.0003);
  EXPECT_EQ(p.resolved(KernelClassId::wgmma_bf16).prior_writes_us_per_mb_per_cluster, 0.0);
}

TEST(CostModel, ClassKeysNameTheClassAndFieldInErrors) {
  CostParams p;
  const auto e = input_error_of([&] { set_cost_param(p, "wgmma-fp9.t_fix_us", 1); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_NE(std::string(e->what()).find("unknown kernel class 'wgmma-fp9'"), std::string::npos) << e->what();
  EXPECT_THROW(set_cost_param(p, "wgmma-fp8.t_fixed", 1), InputError);
  EXPECT_THROW(set_cost_param(p, "wgmma-fp8.reread_fraction", 1.5), InputError);
  EXPECT_THROW(set_cost_param(p, "bw_knee", 0.5), InputError);
  EXPECT_THROW(set_cost_param(p, "compute_overlap_n", 0.5), InputError);
  EXPECT_THROW(set_cost_param(p, "compute_overlap_n", 65), InputError);
  EXPECT_THROW(set_cost_param(p, "grid_stream_factor", 0), InputError);
  EXPECT_THROW(set_cost_param(p, "grid_stream_factor", 4.5), InputError);
  EXPECT_THROW(set_cost_param(p, "wgmma-bf16-pair.grid_stream_factor", 0), InputError);
}

TEST(CostModel, SetThenGetReturnsTheValue) {
  CostParams p;
  for (const std::string& key : cost_param_keys()) {
    // 1 is in every range but a share floor's, which stays below it.
    const double value = key.ends_with(".writeback_share_floor") ? 0.5 : 1.0;
    set_cost_param(p, key, value);
    EXPECT_DOUBLE_EQ(get_cost_param(p, key), value) << key;
  }
}

TEST(CostModel, UnknownKeyIsAnInputError) {
  CostParams p;
  EXPECT_THROW(get_cost_param(p, "t_fixed"), InputError);
}

TEST(CostModel, GridOccupancyMustBeAWholeNumber) {
  CostParams p;
  EXPECT_THROW(set_cost_param(p, "grid_occupancy", 1.5), InputError);
}

TEST(CostModel, NegativeTimeIsRejected) {
  CostParams p;
  p.launch_us = -1;
  EXPECT_THROW(validate_cost_params(p), InputError);
}

TEST(CostModel, DefaultConstructedParamsAreValid) { EXPECT_NO_THROW(validate_cost_params(CostParams{})); }

}  // namespace
}  // namespace mlasim
