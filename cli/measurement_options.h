#pragma once
// The measurement inputs calibrate and report share: measurement files (the project's CSV, the public measurements
// format, an AITER op-test log or a rocprofv3 kernel trace; --measurements-format, detected by default), the GPU
// whose rows are used, and for kernel traces the workload they measured (the workload flags or --scenario, with
// --policy or the scenario's policy A).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "mlasim/model/gpu.h"
#include "mlasim/validate/measurement_csv.h"
#include "workload_options.h"

namespace mlasim::cli {

struct MeasurementOptions {
  std::vector<std::string> files;
  std::string gpu = "mi355x";
  std::string input_format = "auto";  // --measurements-format (--format is the report's output format)
  WorkloadOptions workload;           // rocprof traces: the workload measured
  std::string policy;
  CLI::Option* policy_flag = nullptr;
  bool files_required = true;  // calibrate may run on a streaming-read sweep alone
  // each: every row as read; median: a configuration found in several files (sessions of one campaign) is one row,
  // its times the median over them (measurement_sessions.h)
  std::string sessions = "each";

  void add_to(CLI::App& app);
  // The profile file's path (a built-in name resolves to data/gpus/<name>.json).
  std::string profile_path() const;
  // The rows of every file measured on this GPU (with --sessions median, one per configuration); rows an importer
  // left out are named on stderr, one line each.
  // Throws InputError("measurements", ...) when there are none.
  std::vector<validate::MeasurementRow> rows_for(const Gpu& gpu) const;
  // "a.csv, b.csv"
  std::string file_list() const;

 private:
  // The workload of --scenario and the workload flags as a measurement row (rocprof traces).
  validate::MeasurementRow trace_workload() const;
};

}  // namespace mlasim::cli
