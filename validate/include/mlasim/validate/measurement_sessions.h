#pragma once
// Several measurement sessions of the same configurations (the same campaign run on other leases or days) as one
// set of rows: each configuration once, its times the median over the sessions that measured it. A single session
// carries its run-to-run noise (docs/validation.md §0.5: median 0.9 %, p90 3.5 % between two H100 sessions) into
// every "measured best"; the median of three sessions is a steadier reference for the errors and the best pick.
#include <string>
#include <vector>

#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

// The key under which two sessions' rows are the same configuration: the campaign and configuration id where the
// row has one, else its GPU, workload and policy.
std::string configuration_key(const MeasurementRow& r);
// The workload part of it (GPU, lengths, heads, qlen, dtypes, page size, clusters, top-k): rows that differ only in
// policy share it.
std::string workload_key(const MeasurementRow& r);

struct SessionMedian {
  std::vector<MeasurementRow> rows;  // one per configuration, in the order each first appears
  int max_sessions = 0;              // the most sessions any configuration was measured in
  int in_every_session = 0;          // configurations measured in max_sessions sessions
};

// Rows whose configuration_key repeats are one configuration measured in several sessions: the first such row is
// kept, its stage1_us, reduce_us, kernel_us, kv_tbps and time_ratio each become the median of the sessions that
// measured it (the mean of the middle two for an even count), and its source says "median of N sessions".
SessionMedian median_over_sessions(const std::vector<MeasurementRow>& rows);

}  // namespace mlasim::validate
