#pragma once
// How well measurements repeat: the same configurations measured in two sessions, compared with each other. It is
// the floor under every model error: a model cannot be judged more precisely than two measurements of the same
// kernel agree, and a best-policy pick cannot beat the rate at which one session's fastest policy is within 3 %
// of the other's (`mlasim report --measurements A.csv --repeat B.csv`).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

struct RepeatabilityStats {
  int matched = 0;                 // configurations with kernel_us in both sessions
  int unmatched = 0;               // rows of the first session the second lacks
  double median_abs_diff_pct = 0;  // |second / first - 1|
  double p90_abs_diff_pct = 0;
  double max_abs_diff_pct = 0;
  double mean_signed_diff_pct = 0;
  int workloads = 0;                        // workloads with two or more policies matched
  double best_within_3pct_pct = 0;          // the first session's fastest policy within 3 % of the second's fastest
  double best_within_3pct_reverse_pct = 0;  // and the other way round
};

// Rows match by campaign configuration id where both have one, else by GPU, workload and policy. Only kernel_us
// rows of `gpu` count.
RepeatabilityStats measurement_repeatability(const std::vector<MeasurementRow>& first,
                                             const std::vector<MeasurementRow>& second);

nlohmann::ordered_json repeatability_json(const RepeatabilityStats& s);
std::string repeatability_text(const RepeatabilityStats& s);

}  // namespace mlasim::validate
