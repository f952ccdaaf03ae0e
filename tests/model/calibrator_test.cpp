#include "mlasim/model/calibrator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

// A known function of the parameters: row i has w_i works and b_i bytes on one cluster.
struct SyntheticRows {
  std::vector<double> works{1, 2, 4, 8, 1, 3, 16, 2, 5, 7, 1, 12};
  std::vector<double> bytes{1e4, 5e5, 2e6, 1e5, 8e6, 3e4, 1e6, 4e6, 2e5, 6e6, 3e5, 9e5};

  double time(size_t i, const CostParams& p) const { return works[i] * p.t_fix_us + bytes[i] / (p.beta_cu_gbps * 1e3); }
  CalibrationProblem problem(const CostParams& truth, const Gpu& gpu) const {
    CalibrationProblem pb;
    pb.start.t_fix_us = 1.0;
    pb.start.beta_cu_gbps = 200.0;
    pb.free = {free_parameter("t_fix_us", gpu), free_parameter("beta_cu_gbps", gpu)};
    for (size_t i = 0; i < works.size(); ++i) pb.measured_us.push_back(time(i, truth));
    pb.predict = [this](size_t i, const CostParams& p) { return time(i, p); };
    return pb;
  }
};

Gpu test_gpu() {
  Gpu g;
  g.name = "test";
  g.num_cu = 8;
  g.hbm_tbps = 4.0;
  return g;
}

CostParams truth() {
  CostParams t;
  t.t_fix_us = 3.2;
  t.beta_cu_gbps = 41.0;
  return t;
}

TEST(Calibrator, RecoversTheParametersThatGeneratedTheRows) {
  const SyntheticRows rows;
  const CalibrationResult r = calibrate(rows.problem(truth(), test_gpu()));
  EXPECT_NEAR(r.params.t_fix_us, 3.2, 1e-6);
  EXPECT_NEAR(r.params.beta_cu_gbps, 41.0, 1e-5);
  EXPECT_LT(r.fit_mape_pct, 1e-6);
}

TEST(Calibrator, LeavesTheOtherParametersAlone) {
  const SyntheticRows rows;
  CalibrationProblem pb = rows.problem(truth(), test_gpu());
  pb.start.reduce_block_us = 0.77;
  EXPECT_DOUBLE_EQ(calibrate(pb).params.reduce_block_us, 0.77);
}

TEST(Calibrator, UncertaintyCoversTheTruthUnderNoise) {
  const SyntheticRows rows;
  CalibrationProblem pb = rows.problem(truth(), test_gpu());
  for (size_t i = 0; i < pb.measured_us.size(); ++i) pb.measured_us[i] *= 1.0 + 0.02 * std::sin(3.0 * double(i));
  const CalibrationResult r = calibrate(pb);
  ASSERT_GT(r.fitted[0].std_error, 0.0);
  ASSERT_GT(r.fitted[1].std_error, 0.0);
  EXPECT_LT(std::abs(r.fitted[0].value - 3.2), 4 * r.fitted[0].std_error);
  EXPECT_LT(std::abs(r.fitted[1].value - 41.0), 4 * r.fitted[1].std_error);
}

TEST(Calibrator, AParameterTheRowsIgnoreHasNoUncertainty) {
  const SyntheticRows rows;
  CalibrationProblem pb = rows.problem(truth(), test_gpu());
  for (size_t i = 0; i < pb.measured_us.size(); ++i) pb.measured_us[i] *= 1.0 + 0.01 * std::cos(double(i));
  pb.free.push_back(free_parameter("matrix_efficiency", test_gpu()));
  EXPECT_TRUE(std::isnan(calibrate(pb).fitted[2].std_error));
}

TEST(Calibrator, HeldOutRowsDoNotMoveTheFit) {
  const SyntheticRows rows;
  CalibrationProblem pb = rows.problem(truth(), test_gpu());
  pb.held_out = every_nth_held_out(pb.measured_us.size(), 4);
  pb.measured_us[3] *= 10.0;  // a held-out row far off the model
  const CalibrationResult r = calibrate(pb);
  EXPECT_NEAR(r.params.t_fix_us, 3.2, 1e-6);
  EXPECT_NEAR(r.held_out_mape_pct, 90.0 / 3.0, 1e-4);  // rows 3, 7, 11: 90 %, 0, 0
}

TEST(Calibrator, BHbmIsBoundedByTheDatasheetPeak) {
  EXPECT_DOUBLE_EQ(free_parameter("b_hbm_tbps", test_gpu()).upper, 4.0);
}

TEST(Calibrator, UnknownParameterNamesTheFittableOnes) {
  const auto e = input_error_of([&] { free_parameter("grid_occupancy", test_gpu()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "free");
  EXPECT_NE(std::string(e->what()).find("t_fix_us"), std::string::npos);
}

TEST(Calibrator, MoreParametersThanRowsIsAnInputError) {
  const SyntheticRows rows;
  CalibrationProblem pb = rows.problem(truth(), test_gpu());
  pb.measured_us.resize(1);
  EXPECT_THROW(calibrate(pb), InputError);
}

TEST(Calibrator, EveryNthHeldOut) {
  EXPECT_EQ(every_nth_held_out(8, 4), (std::vector<bool>{false, false, false, true, false, false, false, true}));
}

}  // namespace
}  // namespace mlasim
