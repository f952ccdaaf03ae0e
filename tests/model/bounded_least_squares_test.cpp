#include "mlasim/model/bounded_least_squares.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlasim {
namespace {

// y = a exp(-b t) sampled at t = 0..9, from a = 5, b = 0.3.
Eigen::VectorXd exp_residuals(const Eigen::VectorXd& x) {
  Eigen::VectorXd r(10);
  for (int t = 0; t < 10; ++t) r[t] = x[0] * std::exp(-x[1] * t) - 5.0 * std::exp(-0.3 * t);
  return r;
}

TEST(BoundedLeastSquares, RecoversAnExponentialFromAFarStart) {
  const Eigen::Vector2d lower(0.1, 0.01), upper(100.0, 5.0);
  const auto res = solve_bounded_least_squares(exp_residuals, Eigen::Vector2d(1.0, 1.0), lower, upper);
  EXPECT_TRUE(res.converged);
  EXPECT_NEAR(res.x[0], 5.0, 1e-6);
  EXPECT_NEAR(res.x[1], 0.3, 1e-8);
}

TEST(BoundedLeastSquares, StopsOnTheBoundTheOptimumLiesBeyond) {
  // Unconstrained optimum x = -1; the box [0, 10] holds it at 0.
  const ResidualFunction r = [](const Eigen::VectorXd& x) { return Eigen::VectorXd::Constant(3, x[0] + 1.0); };
  const auto res = solve_bounded_least_squares(r, Eigen::VectorXd::Constant(1, 4.0), Eigen::VectorXd::Zero(1),
                                               Eigen::VectorXd::Constant(1, 10.0));
  EXPECT_DOUBLE_EQ(res.x[0], 0.0);
  EXPECT_TRUE(res.at_bound[0]);
}

TEST(BoundedLeastSquares, ClipsAStartOutsideTheBox) {
  const ResidualFunction r = [](const Eigen::VectorXd& x) { return Eigen::VectorXd::Constant(1, x[0] - 2.0); };
  const auto res = solve_bounded_least_squares(r, Eigen::VectorXd::Constant(1, 50.0), Eigen::VectorXd::Zero(1),
                                               Eigen::VectorXd::Constant(1, 10.0));
  EXPECT_NEAR(res.x[0], 2.0, 1e-9);
}

TEST(BoundedLeastSquares, NumericJacobianOfALinearMapIsItsMatrix) {
  const ResidualFunction r = [](const Eigen::VectorXd& x) { return Eigen::Vector2d(3 * x[0] - x[1], 2 * x[1]); };
  const Eigen::Vector2d x(1.0, 2.0);
  const Eigen::MatrixXd j =
      numeric_jacobian(r, x, r(x), Eigen::Vector2d(-10, -10), Eigen::Vector2d(10, 10), Eigen::Vector2d(1, 1), 1e-4);
  EXPECT_NEAR((j - (Eigen::Matrix2d() << 3, -1, 0, 2).finished()).norm(), 0.0, 1e-9);
}

}  // namespace
}  // namespace mlasim
