// CostParams: datasheet-derived defaults, profile overrides, keys and ranges.
#include "mlasim/model/cost_model.h"

#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"

namespace mlasim {
namespace {

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
  try {
    cost_params_for(g);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpu.params.matrix_efficiency");
  }
}

TEST(CostModel, KeysFollowTheDeclarationOrder) {
  EXPECT_EQ(cost_param_keys(), (std::vector<std::string>{"t_fix_us", "beta_cu_gbps", "b_hbm_tbps", "matrix_efficiency",
                                                         "launch_us", "reduce_block_us", "reduce_launch_us",
                                                         "planner_us", "grid_block_us", "grid_occupancy"}));
}

TEST(CostModel, SetThenGetReturnsTheValue) {
  CostParams p;
  for (const std::string& key : cost_param_keys()) {
    set_cost_param(p, key, 1.0);
    EXPECT_DOUBLE_EQ(get_cost_param(p, key), 1.0) << key;
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
