#pragma once
// Importer for the public measurements format (reference/public_measurements.csv): one published number per row,
// with columns gpu, kernel, q_dtype, kv_dtype, batch, context, q_heads, kv_heads, qseqlen, page_size,
// split_setting, metric, value, unit, source.
//
// Time metrics become MeasurementRows (kernel_time -> kernel_us; reduce_kernel_time[_graph|_avg_time] ->
// reduce_us), and so do time ratios of two policies (time_ratio_* -> time_ratio, with the denominator's policy
// from the assumptions' vs_policy); other metrics (bandwidths, hardware specs) and rows the importer cannot read
// are skipped with a reason. An optional extra column `assumptions` ("key=value; key=value") fills in or overrides
// what a publication left out (policy, vs_policy, context, page_size, q_dtype, kv_dtype, clusters), so every
// assumption stays written next to the row it applies to.
#include <string>
#include <string_view>
#include <vector>

#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

struct PublicImport {
  std::vector<MeasurementRow> rows;
  std::vector<std::string> skipped;  // "<origin> line N: reason"
};

bool is_public_measurements_header(const std::vector<std::string>& header);

// Throws InputError("csv", ...) for a missing column or a malformed line, InputError("assumptions", ...) for a
// malformed assumptions cell.
PublicImport import_public_measurements(std::string_view text, const std::string& origin);

// "MI355X (gfx950, 'MI35x')" -> "mi355x", "MI350 (gfx950)" -> "mi350x": the built-in profile a GPU label names,
// or the label's first word in lower case when no profile matches.
std::string profile_name_for_label(const std::string& label);

}  // namespace mlasim::validate
