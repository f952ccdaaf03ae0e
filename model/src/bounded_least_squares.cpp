#include "mlasim/model/bounded_least_squares.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mlasim {
namespace {

Eigen::VectorXd clip(const Eigen::VectorXd& x, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {
  return x.cwiseMax(lower).cwiseMin(upper);
}

// A variable is held when it sits on a bound and the descent direction (-gradient) points out of the box.
std::vector<bool> held_at_bound(const Eigen::VectorXd& x, const Eigen::VectorXd& gradient, const Eigen::VectorXd& lower,
                                const Eigen::VectorXd& upper, const Eigen::VectorXd& scale) {
  std::vector<bool> held(static_cast<size_t>(x.size()));
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double eps = 1e-12 * scale[i];
    held[static_cast<size_t>(i)] =
        (x[i] <= lower[i] + eps && gradient[i] > 0) || (x[i] >= upper[i] - eps && gradient[i] < 0);
  }
  return held;
}

}  // namespace

Eigen::MatrixXd numeric_jacobian(const ResidualFunction& r, const Eigen::VectorXd& x, const Eigen::VectorXd& r_at_x,
                                 const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                 const Eigen::VectorXd& scale, double relative_step, int* evaluations) {
  Eigen::MatrixXd jac(r_at_x.size(), x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double h = relative_step * std::max(std::abs(x[i]), scale[i]);
    const bool room_up = x[i] + h <= upper[i];
    const bool room_down = x[i] - h >= lower[i];
    Eigen::VectorXd up = x, down = x;
    if (room_up) up[i] += h;
    if (room_down) down[i] -= h;
    // Central where the box allows, else one-sided (a variable at a bound still gets a derivative).
    const Eigen::VectorXd r_up = room_up ? r(up) : r_at_x;
    const Eigen::VectorXd r_down = room_down ? r(down) : r_at_x;
    if (evaluations) *evaluations += int(room_up) + int(room_down);
    jac.col(i) = (r_up - r_down) / (up[i] - down[i]);
  }
  return jac;
}

LeastSquaresResult solve_bounded_least_squares(const ResidualFunction& r, const Eigen::VectorXd& x0,
                                               const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                                               const LeastSquaresOptions& options) {
  const Eigen::Index n = x0.size();
  if (lower.size() != n || upper.size() != n) throw std::invalid_argument("bounds and x0 differ in size");
  for (Eigen::Index i = 0; i < n; ++i)
    if (!(lower[i] < upper[i])) throw std::invalid_argument("each lower bound must be below its upper bound");

  // Each variable's natural size: steps and damping are measured relative to it.
  Eigen::VectorXd scale(n);
  for (Eigen::Index i = 0; i < n; ++i) scale[i] = std::max({std::abs(x0[i]), 1e-3 * (upper[i] - lower[i]), 1e-12});

  LeastSquaresResult res;
  res.x = clip(x0, lower, upper);
  res.residuals = r(res.x);
  res.evaluations = 1;
  res.cost = 0.5 * res.residuals.squaredNorm();
  double damping = options.initial_damping;

  for (res.iterations = 0; res.iterations < options.max_iterations; ++res.iterations) {
    res.jacobian =
        numeric_jacobian(r, res.x, res.residuals, lower, upper, scale, options.relative_step, &res.evaluations);
    const Eigen::VectorXd gradient = res.jacobian.transpose() * res.residuals;
    res.at_bound = held_at_bound(res.x, gradient, lower, upper, scale);
    std::vector<Eigen::Index> free;
    for (Eigen::Index i = 0; i < n; ++i)
      if (!res.at_bound[static_cast<size_t>(i)]) free.push_back(i);
    if (free.empty()) {
      res.converged = true;
      break;
    }
    // Scaled free subproblem: columns of J times the variable scales.
    Eigen::MatrixXd js(res.jacobian.rows(), static_cast<Eigen::Index>(free.size()));
    for (size_t k = 0; k < free.size(); ++k)
      js.col(static_cast<Eigen::Index>(k)) = res.jacobian.col(free[k]) * scale[free[k]];
    const Eigen::MatrixXd jtj = js.transpose() * js;
    const Eigen::VectorXd g = js.transpose() * res.residuals;
    if (g.norm() <= 1e-14 * std::max(1.0, res.cost)) {
      res.converged = true;
      break;
    }

    bool improved = false;
    bool tiny_step = false;
    for (int attempt = 0; attempt < 30 && !improved; ++attempt) {
      Eigen::MatrixXd a = jtj;
      a.diagonal() += damping * (jtj.diagonal().array() + 1e-12).matrix();
      const Eigen::VectorXd step_scaled = a.ldlt().solve(-g);
      Eigen::VectorXd candidate = res.x;
      for (size_t k = 0; k < free.size(); ++k)
        candidate[free[k]] += step_scaled[static_cast<Eigen::Index>(k)] * scale[free[k]];
      candidate = clip(candidate, lower, upper);
      const Eigen::VectorXd r_new = r(candidate);
      ++res.evaluations;
      const double cost_new = 0.5 * r_new.squaredNorm();
      const double step_norm = ((candidate - res.x).array() / scale.array()).matrix().norm();
      if (std::isfinite(cost_new) && cost_new < res.cost) {
        const double gain = (res.cost - cost_new) / std::max(res.cost, 1e-300);
        res.x = candidate;
        res.residuals = r_new;
        res.cost = cost_new;
        damping = std::max(damping / 3.0, 1e-12);
        improved = true;
        tiny_step = gain < options.cost_tolerance || step_norm < options.step_tolerance;
      } else {
        damping *= 4.0;
        tiny_step = step_norm < options.step_tolerance;
        if (tiny_step) break;
      }
    }
    if (!improved || tiny_step) {
      res.converged = true;
      ++res.iterations;
      break;
    }
  }
  // Final Jacobian at the solution, for the caller's uncertainty estimate.
  res.jacobian =
      numeric_jacobian(r, res.x, res.residuals, lower, upper, scale, options.relative_step, &res.evaluations);
  res.at_bound = held_at_bound(res.x, res.jacobian.transpose() * res.residuals, lower, upper, scale);
  return res;
}

}  // namespace mlasim
