#pragma once
// The memory system's saturation curve, fitted to a streaming-read sweep (`mlasim validate --stream-out`): k
// streaming workgroups that would each read at `a` alone together read D / (1 + (D / B)^n)^(1/n), D = k a. The
// fit gives the profile's b_hbm_tbps (B) and bw_knee (n); docs/model.md §3 explains the curve.
#include <string>
#include <vector>

#include "mlasim/validate/kernel_measurer.h"

namespace mlasim::validate {

// Reads the sweep's CSV (columns clusters, wg_per_cluster, tbps; the rest is provenance). One line naming the
// file, line and column for a malformed cell (InputError).
std::vector<StreamReadPoint> read_stream_read_csv(const std::string& path);

struct BandwidthCurveFit {
  double b_max_tbps = 0;               // B
  double knee = 0;                     // n
  double b_max_std = 0, knee_std = 0;  // 1 sigma
  double mape_pct = 0, max_abs_error_pct = 0;
  int points = 0;
};

// The curve's throughput for an offered load of `offered_tbps`.
double curve_tbps(double offered_tbps, double b_max_tbps, double knee);

// Fits B and n. The load a point offers is its SM count times what one SM with as many workgroups reads alone
// (the sweep's points on one SM). Throws InputError("stream-read", ...) without a one-SM point for a workgroup
// count it uses, or with fewer than three points.
BandwidthCurveFit fit_bandwidth_curve(const std::vector<StreamReadPoint>& points);

}  // namespace mlasim::validate
