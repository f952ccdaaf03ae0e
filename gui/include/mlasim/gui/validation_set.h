#pragma once
// A measurement file as the Validation tab shows it: read through validate's importers (format detected from the
// content), every row of one GPU planned and predicted with that GPU's profile (validate::evaluate_profile), the
// kernel-time rows as scatter points with their error statistics. A point's row becomes an explorer workload
// that plans exactly as the row was predicted.
#include <string>
#include <vector>

#include "mlasim/gui/validation_plots.h"
#include "mlasim/sim/workload.h"
#include "mlasim/validate/calibration_run.h"
#include "mlasim/validate/error_report.h"
#include "mlasim/validate/measurement_import.h"

namespace mlasim::gui {

// What the importers cannot read from the file, supplied by the explorer.
struct ValidationSource {
  std::string gpu;           // the profile to predict with; empty: the GPU named in the rows, else fallback_gpu
  std::string fallback_gpu;  // the explorer's GPU: also the GPU logs and traces are attributed to
  // A rocprof trace records no workload: the explorer's (its policy A planned it), as `measurement_row_of` makes it.
  validate::MeasurementRow trace_workload;
};

struct ValidationSet {
  std::string path;
  validate::MeasurementFormat format = validate::MeasurementFormat::csv;
  std::string gpu;                      // the profile the rows were predicted with
  validate::CalibrationRun run;         // every row of that GPU, planned and predicted
  std::vector<ValidationPoint> points;  // its kernel_us rows; ValidationPoint::row indexes run.rows
  validate::ErrorStats stats;           // of the points' errors
  std::vector<std::string> notes;       // rows the importer left out, and why
  size_t other_gpu_rows = 0;            // rows measured on another GPU, not shown
};

// Reads and predicts `path`. Throws InputError naming the file (and line and column where an importer says) when
// it cannot be read or parsed, holds no row of the GPU, or a row does not plan.
ValidationSet load_validation_set(const std::string& path, const ValidationSource& source);

// The workload `row` was planned on, on `gpu`: its batch (uniform, or the list of a ragged row), qlen, heads,
// dtypes, page size, clusters and the planner granularity prepare_row gave it, so sim::resolve + sim::evaluate
// with the row's policy build row.plan again.
sim::Workload row_workload(const validate::PreparedRow& row, const std::string& gpu);

}  // namespace mlasim::gui
