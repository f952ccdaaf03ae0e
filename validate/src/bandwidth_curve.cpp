#include "mlasim/validate/bandwidth_curve.h"

#include <cmath>
#include <map>
#include <sstream>

#include "mlasim/model/bounded_least_squares.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {
namespace {

int column_of(const std::vector<std::string>& header, const std::string& name, const std::string& path) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  throw InputError("stream-read", path + ": no '" + name + "' column");
}

double number(const std::string& cell, const std::string& where) {
  try {
    size_t used = 0;
    const double v = std::stod(cell, &used);
    if (used == cell.size() && std::isfinite(v) && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw InputError("stream-read", where + ": must be a number > 0, got '" + cell + "'");
}

}  // namespace

std::vector<StreamReadPoint> read_stream_read_csv(const std::string& path) {
  std::istringstream in(read_text_file(path, "stream-read"));
  std::string header_line;
  if (!std::getline(in, header_line)) throw InputError("stream-read", path + ": empty file");
  const auto header = split_csv_record(header_line, path + " line 1");
  const int c_sms = column_of(header, "clusters", path), c_wg = column_of(header, "wg_per_cluster", path);
  const int c_tbps = column_of(header, "tbps", path);
  std::vector<StreamReadPoint> points;
  for_each_csv_record(in, path, header.size(),
                      [&](const std::vector<std::string>& cells, const std::string& where, int) {
                        StreamReadPoint p;
                        p.active_sms = static_cast<int>(number(cells[c_sms], where + " column clusters"));
                        p.wg_per_sm = static_cast<int>(number(cells[c_wg], where + " column wg_per_cluster"));
                        p.tbps = number(cells[c_tbps], where + " column tbps");
                        points.push_back(p);
                      });
  return points;
}

double curve_tbps(double offered_tbps, double b_max_tbps, double knee) {
  return offered_tbps / std::pow(1.0 + std::pow(offered_tbps / b_max_tbps, knee), 1.0 / knee);
}

BandwidthCurveFit fit_bandwidth_curve(const std::vector<StreamReadPoint>& points) {
  if (points.size() < 3) throw InputError("stream-read", "needs at least three points to fit the curve");
  std::map<int, double> alone;  // workgroups per SM -> one SM's read rate
  for (const StreamReadPoint& p : points)
    if (p.active_sms == 1) alone[p.wg_per_sm] = p.tbps;
  std::vector<double> offered, measured;
  double peak = 0;
  for (const StreamReadPoint& p : points) {
    auto it = alone.find(p.wg_per_sm);
    if (it == alone.end())
      throw InputError("stream-read", "no one-SM point for " + std::to_string(p.wg_per_sm) + " workgroups per SM");
    offered.push_back(it->second * p.active_sms);
    measured.push_back(p.tbps);
    peak = std::max(peak, p.tbps);
  }
  const auto n = static_cast<Eigen::Index>(offered.size());
  const ResidualFunction residuals = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(n);
    for (Eigen::Index i = 0; i < n; ++i) r[i] = curve_tbps(offered[i], x[0], x[1]) / measured[i] - 1.0;
    return r;
  };
  Eigen::VectorXd x0(2), lo(2), hi(2);
  x0 << peak * 1.05, 4.0;
  lo << peak * 0.5, 1.0;
  hi << peak * 3.0, 64.0;
  const LeastSquaresResult ls = solve_bounded_least_squares(residuals, x0, lo, hi);
  BandwidthCurveFit fit;
  fit.b_max_tbps = ls.x[0];
  fit.knee = ls.x[1];
  fit.points = static_cast<int>(n);
  double sum = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double e = 100.0 * std::abs(ls.residuals[i]);
    sum += e;
    fit.max_abs_error_pct = std::max(fit.max_abs_error_pct, e);
  }
  fit.mape_pct = sum / static_cast<double>(n);
  const double dof = static_cast<double>(n) - 2.0;
  const Eigen::MatrixXd jtj = ls.jacobian.transpose() * ls.jacobian;
  if (dof > 0 && jtj.determinant() > 0) {
    const Eigen::MatrixXd cov = jtj.inverse() * (ls.residuals.squaredNorm() / dof);
    fit.b_max_std = std::sqrt(std::max(0.0, cov(0, 0)));
    fit.knee_std = std::sqrt(std::max(0.0, cov(1, 1)));
  }
  return fit;
}

}  // namespace mlasim::validate
