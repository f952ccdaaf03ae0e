#pragma once
// Box-constrained nonlinear least squares: minimise 1/2 |r(x)|^2 subject to lower <= x <= upper.
// Projected Levenberg-Marquardt with a numeric (central-difference) Jacobian: variables held at a bound by the
// gradient are frozen for the step, the others take a damped Gauss-Newton step that is then clipped to the box.
#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace mlasim {

using ResidualFunction = std::function<Eigen::VectorXd(const Eigen::VectorXd& x)>;

struct LeastSquaresOptions {
  int max_iterations = 200;
  double relative_step = 1e-4;    // finite-difference step, relative to each variable's scale
  double cost_tolerance = 1e-12;  // stop when a step lowers the cost by less than this fraction
  double step_tolerance = 1e-10;  // stop when the scaled step is shorter than this
  double initial_damping = 1e-3;
};

struct LeastSquaresResult {
  Eigen::VectorXd x;
  Eigen::VectorXd residuals;
  Eigen::MatrixXd jacobian;  // at x
  double cost = 0;           // 1/2 |r(x)|^2
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
  std::vector<bool> at_bound;  // x[i] sits on a bound that the gradient pushes against
};

// Numeric Jacobian of r at x (central differences, one-sided at a bound). `scale` sets each variable's step.
Eigen::MatrixXd numeric_jacobian(const ResidualFunction& r, const Eigen::VectorXd& x, const Eigen::VectorXd& r_at_x,
                                 const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                 const Eigen::VectorXd& scale, double relative_step, int* evaluations = nullptr);

// Requires lower <= x0 <= upper (x0 is clipped into the box) and lower < upper elementwise.
LeastSquaresResult solve_bounded_least_squares(const ResidualFunction& r, const Eigen::VectorXd& x0,
                                               const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                               const LeastSquaresOptions& options = {});

}  // namespace mlasim
