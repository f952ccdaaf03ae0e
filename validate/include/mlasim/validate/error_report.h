#pragma once
// Where the model is wrong, in the aggregate: error statistics per slice of the measurements (policy, kernel
// class, heads, context band, KV dtype, page size, cluster subset, measured size), the error of predicted
// speedups between policies measured on one workload, and what picking the predicted-best policy costs.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/validate/calibration_run.h"

namespace mlasim::validate {

struct ErrorStats {
  int rows = 0;
  double mape_pct = 0;  // mean |error|
  double p50_pct = 0;   // median |error|
  double p90_pct = 0;   // 90th percentile |error|
  double max_pct = 0;
  double mean_signed_pct = 0;  // + means predicted too slow
};

// Statistics of signed percentage errors.
ErrorStats error_stats(const std::vector<double>& signed_errors_pct);

struct Slice {
  std::string name;
  ErrorStats stats;
};

struct SliceTable {
  std::string by;  // "policy", "kernel class", ...
  std::vector<Slice> slices;
};

// The class the model costs a prepared row with (the one that ran, else `auto`'s rule): kernel_class.h's name.
std::string kernel_class(const PreparedRow& row);

// One table per slicing, over the rows of `run` (kernel_us rows), each slice in a stable order.
std::vector<SliceTable> error_slices(const CalibrationRun& run, bool held_out_only = false);

struct PairStats {
  int pairs = 0;                    // two policies measured on one workload
  double median_abs_error_pct = 0;  // |predicted ratio / measured ratio - 1|
  double p90_abs_error_pct = 0;
  int differing_pairs = 0;      // pairs whose measured times differ by >= 10 %
  double faster_named_pct = 0;  // of those, the share where the model names the faster policy
};

struct RegretStats {
  int workloads = 0;           // workloads measured under two or more policies
  double mean_regret_pct = 0;  // measured time of the predicted-best policy over the measured best, - 1
  double within_3pct_pct = 0;  // share of workloads whose pick is within 3 % of the measured best
  double exact_pct = 0;        // share where the pick is the measured best
};

PairStats speedup_pairs(const CalibrationRun& run);
// The same, per kernel class: the pairs whose two rows the model costs with one class (the profile's ratio_error).
std::map<std::string, PairStats> speedup_pairs_by_class(const CalibrationRun& run);
RegretStats best_policy_regret(const CalibrationRun& run);

// The whole report (rows, slices, pairs, regret) as JSON, and its summary as text.
nlohmann::ordered_json error_report_json(const CalibrationRun& run);
std::string error_report_text(const CalibrationRun& run);

}  // namespace mlasim::validate
