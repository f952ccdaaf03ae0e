#pragma once
// Fits a GPU profile's free cost-model parameters to measured times by bounded least squares on relative errors.
// model/ does not know how a time is predicted: the caller passes "predict the time of row i with params p"
// (validate/ builds the plans and runs the simulator), so the fit works for any model of the rows.
#include <functional>
#include <string>
#include <vector>

#include "mlasim/model/bounded_least_squares.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/model/gpu.h"

namespace mlasim {

// One parameter the fit may move, inside [lower, upper].
struct FreeParameter {
  std::string key;  // a cost_param_keys() name, e.g. "t_fix_us"
  double lower = 0;
  double upper = 0;
};

// The parameters a fit may move, with physical bounds for `gpu` (b_hbm_tbps never above the datasheet peak).
// Throws InputError("free", ...) listing the fittable keys for an unknown or integer-valued key.
FreeParameter free_parameter(const std::string& key, const Gpu& gpu);
const std::vector<std::string>& fittable_cost_param_keys();

using RowPredictor = std::function<double(size_t row, const CostParams& params)>;

struct CalibrationProblem {
  CostParams start;  // initial values of the free parameters, final values of the others
  std::vector<FreeParameter> free;
  std::vector<double> measured_us;  // one per row, > 0
  std::vector<bool> held_out;       // rows kept out of the fit and only predicted afterwards (empty: none)
  RowPredictor predict;
};

struct FittedParameter {
  std::string key;
  double start = 0;
  double value = 0;
  double std_error = 0;  // 1 sigma from s^2 (J^T J)^-1; NaN when the rows do not determine it
  double lower = 0, upper = 0;
  bool at_bound = false;  // held on a bound: its uncertainty is not defined
};

struct RowFit {
  size_t row = 0;
  double measured_us = 0;
  double predicted_us = 0;
  double error_pct = 0;  // 100 (predicted - measured) / measured
  bool held_out = false;
};

struct CalibrationResult {
  CostParams params;  // start with the fitted values written in
  std::vector<FittedParameter> fitted;
  std::vector<RowFit> rows;  // every row, fitted and held out, in input order
  int fit_rows = 0;
  int held_out_rows = 0;
  double fit_mape_pct = 0;       // mean |error| over the fitted rows
  double held_out_mape_pct = 0;  // mean |error| over the held-out rows (0 when none)
  double max_abs_error_pct = 0;  // over every row
  double residual_std = 0;       // sqrt(SSR / (fit rows - free parameters)), relative
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
};

// Throws InputError("free", ...) when there are no free parameters or fewer fitted rows than free parameters,
// and InputError("measurements", ...) for a measured time <= 0.
CalibrationResult calibrate(const CalibrationProblem& problem, const LeastSquaresOptions& options = {});

// Rows to hold out: every `every`-th row (rows every-1, 2*every-1, ...); every <= 1 holds out none.
std::vector<bool> every_nth_held_out(size_t rows, int every);

}  // namespace mlasim
