#include "mlasim/model/calibrator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim {
namespace {

struct Bounds {
  double lower, upper;
};

// Physical ranges: wide enough never to bind on real hardware, tight enough to keep the simulator sane.
const std::map<std::string, Bounds>& bound_table() {
  static const std::map<std::string, Bounds> table{
      {"t_fix_us", {0.01, 100.0}},
      {"beta_cu_gbps", {1.0, 5000.0}},
      {"b_hbm_tbps", {0.1, 0.0}},  // upper: the profile's datasheet peak
      {"matrix_efficiency", {0.01, 1.0}},
      {"launch_us", {0.0, 100.0}},
      {"reduce_block_us", {0.0, 100.0}},
      {"reduce_launch_us", {0.0, 100.0}},
      {"planner_us", {0.0, 200.0}},
      {"grid_block_us", {0.0, 100.0}},
      {"bw_knee", {1.0, 64.0}},
      {"stage_gap_us", {0.0, 50.0}},
      {"second_kernel_us", {0.0, 50.0}},
      {"reduce_beta_gbps", {1.0, 5000.0}},
      {"reduce_item_us", {0.0, 50.0}},
      {"fold_reread_fraction", {0.0, 1.0}},
      {"fold_l2_window", {0.05, 16.0}},  // 0 switches the timeline form off: a fit must not land there
      {"persistent_cluster_us", {0.0, 50.0}},
      {"gather_extra_read", {0.0, 4.0}},
      {"compute_overlap_n", {1.0, 64.0}},
      {"grid_stream_factor", {0.5, 2.0}},
  };
  return table;
}

// The bounds of a per-class field ("wgmma-bf16.t_pass_us" -> "t_pass_us").
const std::map<std::string, Bounds>& class_bound_table() {
  static const std::map<std::string, Bounds> table{
      {"t_fix_us", {0.01, 100.0}},        {"t_pass_us", {0.0, 100.0}},     {"beta_gbps", {1.0, 5000.0}},
      {"matrix_efficiency", {0.01, 1.0}}, {"reread_fraction", {0.0, 1.0}}, {"grid_stream_factor", {0.5, 2.0}},
      {"page_copy_us", {0.0, 10.0}},      {"bw_knee", {1.0, 64.0}},
  };
  return table;
}

double mean_abs(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::abs(x);
  return s / static_cast<double>(v.size());
}

}  // namespace

const std::vector<std::string>& fittable_cost_param_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const std::string& key : cost_param_keys()) {
      const size_t dot = key.find('.');
      if (dot == std::string::npos ? bound_table().count(key) : class_bound_table().count(key.substr(dot + 1)))
        k.push_back(key);
    }
    return k;
  }();
  return keys;
}

FreeParameter free_parameter(const std::string& key, const Gpu& gpu) {
  const auto& keys = fittable_cost_param_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    // The class fields come from the keys themselves, so a new field is listed without editing this message.
    std::vector<std::string> globals, fields;
    for (const std::string& k : keys) {
      const size_t dot = k.find('.');
      if (dot == std::string::npos)
        globals.push_back(k);
      else if (const std::string f = k.substr(dot + 1); std::find(fields.begin(), fields.end(), f) == fields.end())
        fields.push_back(f);
    }
    throw InputError("free", "'" + key + "' is not a fittable parameter; fittable: " + join_names(globals) +
                                 ", and <class>.{" + join_names(fields, ",") + "} for the classes " +
                                 kernel_class_names());
  }
  const size_t dot = key.find('.');
  const Bounds b = dot == std::string::npos ? bound_table().at(key) : class_bound_table().at(key.substr(dot + 1));
  FreeParameter p{key, b.lower, b.upper};
  if (key == "b_hbm_tbps") p.upper = gpu.hbm_tbps;
  return p;
}

std::vector<bool> every_nth_held_out(size_t rows, int every) {
  std::vector<bool> held(rows, false);
  if (every <= 1) return held;
  for (size_t i = static_cast<size_t>(every) - 1; i < rows; i += static_cast<size_t>(every)) held[i] = true;
  return held;
}

CalibrationResult calibrate(const CalibrationProblem& problem, const LeastSquaresOptions& options) {
  const size_t n_rows = problem.measured_us.size();
  const std::vector<bool> held = problem.held_out.empty() ? std::vector<bool>(n_rows, false) : problem.held_out;
  if (held.size() != n_rows)
    throw InputError("holdout", "marks " + std::to_string(held.size()) + " rows of " + std::to_string(n_rows));
  if (problem.free.empty()) throw InputError("free", "needs at least one parameter to fit");
  for (size_t i = 0; i < n_rows; ++i)
    if (!(problem.measured_us[i] > 0))
      throw InputError("measurements", "row " + std::to_string(i) + " has a measured time <= 0");
  std::vector<size_t> fit_rows;
  for (size_t i = 0; i < n_rows; ++i)
    if (!held[i]) fit_rows.push_back(i);
  const auto n_free = static_cast<Eigen::Index>(problem.free.size());
  if (fit_rows.size() < problem.free.size())
    throw InputError("free", std::to_string(problem.free.size()) + " parameters cannot be fitted to " +
                                 std::to_string(fit_rows.size()) + " rows");

  Eigen::VectorXd x0(n_free), lower(n_free), upper(n_free);
  for (Eigen::Index k = 0; k < n_free; ++k) {
    const FreeParameter& f = problem.free[static_cast<size_t>(k)];
    double start = effective_cost_param(problem.start, f.key);
    // A knee of 0 is the sharp limit; its nearest curve is the sharpest, not the softest.
    if (start == 0 && (f.key == "bw_knee" || f.key.ends_with(".bw_knee"))) start = f.upper;
    x0[k] = std::clamp(start, f.lower, f.upper);
    lower[k] = f.lower;
    upper[k] = f.upper;
  }
  auto params_at = [&](const Eigen::VectorXd& x) {
    CostParams p = problem.start;
    for (Eigen::Index k = 0; k < n_free; ++k) set_cost_param(p, problem.free[static_cast<size_t>(k)].key, x[k]);
    return p;
  };
  // Relative residuals: rows from 12 us to 3 ms weigh the same, and the fit minimises what MAPE measures.
  const ResidualFunction residuals = [&](const Eigen::VectorXd& x) {
    const CostParams p = params_at(x);
    Eigen::VectorXd r(static_cast<Eigen::Index>(fit_rows.size()));
    // Serial on purpose: the fit calls this from two stack depths (the Jacobian and the step), and libtbb's
    // unseen writes to a deeper call's stack-held task tree would look raced to ThreadSanitizer in the next.
    for (size_t k = 0; k < fit_rows.size(); ++k) {
      const size_t i = fit_rows[k];
      r[static_cast<Eigen::Index>(k)] = problem.predict(i, p) / problem.measured_us[i] - 1.0;
    }
    return r;
  };
  const LeastSquaresResult ls = solve_bounded_least_squares(residuals, x0, lower, upper, options);

  CalibrationResult out;
  out.params = params_at(ls.x);
  out.iterations = ls.iterations;
  out.evaluations = ls.evaluations;
  out.converged = ls.converged;
  out.fit_rows = static_cast<int>(fit_rows.size());
  out.held_out_rows = static_cast<int>(n_rows - fit_rows.size());
  const double dof = static_cast<double>(fit_rows.size()) - static_cast<double>(n_free);
  out.residual_std = dof > 0 ? std::sqrt(ls.residuals.squaredNorm() / dof) : std::numeric_limits<double>::quiet_NaN();

  // Covariance over the parameters not held at a bound: s^2 (J^T J)^-1. A parameter the rows do not move
  // (a zero or dependent column) gets NaN rather than a made-up number.
  // Parameters on a bound, or that no fitted row responds to (e.g. beta_cu when no row is bandwidth-bound per
  // cluster), have no defined uncertainty; the rest are estimated together.
  double largest_column = 0;
  for (Eigen::Index k = 0; k < n_free; ++k)
    largest_column = std::max(largest_column, ls.jacobian.col(k).norm() * std::abs(ls.x[k]));
  std::vector<Eigen::Index> inner;
  for (Eigen::Index k = 0; k < n_free; ++k)
    if (!ls.at_bound[static_cast<size_t>(k)] && ls.jacobian.col(k).norm() * std::abs(ls.x[k]) > 1e-9 * largest_column)
      inner.push_back(k);
  std::vector<double> std_error(static_cast<size_t>(n_free), std::numeric_limits<double>::quiet_NaN());
  if (!inner.empty() && dof > 0) {
    // Columns scaled by each parameter's size, so the rank test compares relative sensitivities rather than
    // units (t_fix in us against beta_cu in GB/s).
    const auto m = static_cast<Eigen::Index>(inner.size());
    Eigen::MatrixXd js(ls.jacobian.rows(), m);
    Eigen::VectorXd size(m);
    for (Eigen::Index k = 0; k < m; ++k) {
      const Eigen::Index i = inner[static_cast<size_t>(k)];
      size[k] = std::max(std::abs(ls.x[i]), 1e-12);
      js.col(k) = ls.jacobian.col(i) * size[k];
    }
    const Eigen::MatrixXd jtj = js.transpose() * js;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(jtj);
    const double largest = eig.eigenvalues().cwiseAbs().maxCoeff();
    if (largest > 0 && eig.eigenvalues().minCoeff() > 1e-12 * largest) {
      const Eigen::MatrixXd cov = jtj.inverse() * (out.residual_std * out.residual_std);
      for (Eigen::Index k = 0; k < m; ++k)
        std_error[static_cast<size_t>(inner[static_cast<size_t>(k)])] = size[k] * std::sqrt(std::max(0.0, cov(k, k)));
    }
  }
  for (Eigen::Index k = 0; k < n_free; ++k) {
    const FreeParameter& f = problem.free[static_cast<size_t>(k)];
    out.fitted.push_back({f.key, x0[k], ls.x[k], std_error[static_cast<size_t>(k)], f.lower, f.upper,
                          ls.at_bound[static_cast<size_t>(k)]});
  }

  std::vector<double> fit_errors, held_errors;
  for (size_t i = 0; i < n_rows; ++i) {
    const double predicted = problem.predict(i, out.params);
    const double err = 100.0 * (predicted / problem.measured_us[i] - 1.0);
    out.rows.push_back({i, problem.measured_us[i], predicted, err, held[i]});
    (held[i] ? held_errors : fit_errors).push_back(err);
    out.max_abs_error_pct = std::max(out.max_abs_error_pct, std::abs(err));
  }
  out.fit_mape_pct = mean_abs(fit_errors);
  out.held_out_mape_pct = mean_abs(held_errors);
  return out;
}

}  // namespace mlasim
