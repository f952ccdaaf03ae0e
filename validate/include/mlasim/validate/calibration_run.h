#pragma once
// Calibration of a GPU profile against measurement rows: the sim-side glue around mlasim::calibrate.
// Each row's plan is built once (plans do not depend on cost parameters); the fit then re-simulates the plans
// with trial parameters and compares the measured stage (kernel_us, else reduce_us, else stage1_us), or for a
// ratio row the ratio of the two policies' kernel_us.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/model/calibrator.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/kernel_class.h"
#include "mlasim/sim/plan.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

// A measurement row made ready to predict.
struct PreparedRow {
  MeasurementRow row;
  DecodeBatch batch;
  sim::Plan plan;
  sim::Plan vs_plan;       // ratio rows: the denominator's plan
  KernelClassId kernel{};  // the stage-1 kernel class that ran (from the row's kernel name, else `auto`'s rule)
  std::string target;      // what is compared: "kernel_us", "reduce_us", "stage1_us" or "time_ratio"
  double measured_us = 0;  // the measured time (a plain number for time_ratio)
};

// The batch a row describes, with the planner granularity AITER's op test passes (max(page, 16), 32 for 64-head
// fp8) and the plan its policy builds on `gpu`. Throws InputError naming the row's line for a ragged row, an
// unknown policy or a shape the policy does not support.
PreparedRow prepare_row(const MeasurementRow& row, const Gpu& gpu);

// The row's measured stage (or ratio) predicted with `params`.
double predict_row(const PreparedRow& row, const Gpu& gpu, const CostParams& params);

struct CalibrationRunOptions {
  std::vector<std::string> free;  // parameter keys; empty: default_free_keys()
  int holdout_every = 4;          // hold out every n-th row (<= 1: none)
  LeastSquaresOptions solver;
};

const std::vector<std::string>& default_free_keys();

struct CalibrationRun {
  Gpu gpu;  // the profile the fit started from
  std::vector<PreparedRow> rows;
  CalibrationResult result;
};

// Fits `gpu`'s free parameters to `rows` (all of them for this GPU). Throws InputError("measurements", ...)
// when there are no rows.
CalibrationRun run_calibration(const Gpu& gpu, const std::vector<MeasurementRow>& rows,
                               const CalibrationRunOptions& options);

// Every row predicted with the profile's own parameters, nothing fitted (the prediction-error report).
CalibrationRun evaluate_profile(const Gpu& gpu, const std::vector<MeasurementRow>& rows);

// Reports: the fitted parameters with uncertainty, every row's error, MAPE of the fitted and held-out rows.
nlohmann::ordered_json calibration_report_json(const CalibrationRun& run);
std::string calibration_report_text(const CalibrationRun& run);

// "2-9,11,13-20": a compact list of line numbers.
std::string line_ranges(std::vector<int> lines);

// The provenance a fitted parameter carries: the measurement files, the lines fitted and held out, the date.
std::string fitted_source(const CalibrationRun& run, const std::string& measurement_files, const std::string& date);

// `profile_json` (the profile file's text) with each fitted parameter written into `params` as kind "fitted",
// its value, `source` and its 1-sigma `std_error`, and `model_error` per kernel class from the held-out rows (all
// rows when none is held out); every other field is left as it was.
std::string fitted_profile_json(const std::string& profile_json, const CalibrationRun& run, const std::string& source);

// `profile_json` with `params` written over its params (value, kind, source, std_error when known).
std::string profile_json_with_params(const std::string& profile_json, const std::map<std::string, GpuParam>& params);

// The held-out error of each kernel class in `run` (all rows when none is held out).
std::map<std::string, ModelError> model_error_by_class(const CalibrationRun& run, const std::string& source);

}  // namespace mlasim::validate
