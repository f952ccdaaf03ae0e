#pragma once
// The measurement inputs calibrate and report share: CSV files (project or public format) and the GPU whose
// rows are used.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "mlasim/model/gpu.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::cli {

struct MeasurementOptions {
  std::vector<std::string> files;
  std::string gpu = "mi355x";

  void add_to(CLI::App& app);
  // The profile file's path (a built-in name resolves to data/gpus/<name>.json).
  std::string profile_path() const;
  // The rows of every file measured on this GPU; throws InputError("measurements", ...) when there are none.
  std::vector<validate::MeasurementRow> rows_for(const Gpu& gpu) const;
  // "a.csv, b.csv"
  std::string file_list() const;
};

}  // namespace mlasim::cli
