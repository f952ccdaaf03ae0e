#pragma once
// Measurement CSVs: one row per measured configuration (medians of the repetitions), with provenance.
// Columns (docs/validation.md): gpu, kernel, policy, batch, context, heads, qo_len, q_dtype, kv_dtype, page_size,
// clusters, stage1_us, reduce_us, kernel_us, kv_bytes, kv_tbps, max_abs_err, driver, commit, date. Optional
// columns: `source` (where a row was taken from), and `vs_policy` with `time_ratio` for a published ratio
// ("kernel time of policy / kernel time of vs_policy on the same workload") instead of a time; and, on rows a
// campaign measured (`mlasim validate`), `campaign`, `config_id`, `kv_lens` (a ragged batch's lengths, ';'-separated),
// `device` (the GPU as its driver names it), `sm_clock_mhz` and `mem_clock_mhz`. Any other column is ignored.
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlasim/model/dtype.h"
#include "mlasim/sim/workload.h"

namespace mlasim::validate {

struct MeasurementRow {
  std::string gpu;     // profile name, e.g. "mi355x"
  std::string kernel;  // the kernel measured
  std::string policy;  // the split policy spec that planned it, e.g. "aiter-v1:max_split_per_batch=32"
  int batch = 1;
  std::optional<int> context;  // tokens per request; empty for a ragged batch ("ragged")
  int heads = 16;
  int qo_len = 1;
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int page_size = 1;
  int clusters = 0;  // clusters the plan could use; 0 = every CU
  int topk = 0;      // sparse decode: rows each query token selects; 0 = dense
  // Times in microseconds; a stage that was not measured is empty.
  std::optional<double> stage1_us;
  std::optional<double> reduce_us;
  std::optional<double> kernel_us;
  std::optional<double> kv_bytes;
  std::optional<double> kv_tbps;
  std::optional<double> max_abs_err;
  std::string vs_policy;             // with time_ratio: the policy in the denominator
  std::optional<double> time_ratio;  // kernel_us(policy) / kernel_us(vs_policy)
  std::string driver;
  std::string commit;
  std::string date;
  std::string source;  // provenance of a row taken from elsewhere
  // Campaign rows.
  std::string campaign;      // the campaign file's id
  std::string config_id;     // the configuration's stable id within it
  std::vector<int> kv_lens;  // a ragged batch's lengths (empty when `context` says them)
  std::string device;        // e.g. "NVIDIA H100 80GB HBM3"
  std::optional<int> sm_clock_mhz;
  std::optional<int> mem_clock_mhz;
  int line = 0;  // line in the file it was read from (1 = header)

  // Every request's KV length: kv_lens, or batch x context.
  std::vector<int> lengths() const;
};

// A row describing `w` planned by `policy` (gpu, policy, batch and lengths, heads, qlen, dtypes, page size, clusters),
// with nothing measured yet. Throws InputError("qo_lens", ...) for per-request query lengths, which rows cannot hold.
MeasurementRow measurement_row_of(const sim::Workload& w, const std::string& policy);

// The column names, in the order the writer uses.
const std::vector<std::string>& measurement_csv_columns();

// Parses a measurement CSV. A file in the public measurements format (reference/public_measurements.csv:
// columns metric, value, unit, source, ...) goes through import_public_measurements and keeps its importable rows.
// Throws InputError("<column>", "<origin> line N: ...") for a bad cell, and InputError("csv", ...) for a missing
// column or a row with the wrong number of cells.
std::vector<MeasurementRow> parse_measurement_csv(std::string_view text, const std::string& origin);
std::vector<MeasurementRow> read_measurement_csv(const std::string& path);

// Writes rows in the project's format (with the source column): the header line and one line per row.
std::string format_measurement_csv(const std::vector<MeasurementRow>& rows);
std::string measurement_csv_header();
std::string measurement_csv_line(const MeasurementRow& row);  // without the line break

// Splits one CSV record into cells (RFC 4180 quoting: "a,b" and "" inside quotes). Throws InputError("csv", ...)
// naming `where` for an unterminated quote.
std::vector<std::string> split_csv_record(std::string_view record, const std::string& where);

// Reads the data records after the header line of `in`: skips blank lines, splits each record, checks it has
// `header_size` cells, and calls `on_record(cells, where, line_no)` ("where" = "<origin> line N").
void for_each_csv_record(
    std::istream& in, const std::string& origin, size_t header_size,
    const std::function<void(const std::vector<std::string>&, const std::string&, int)>& on_record);

}  // namespace mlasim::validate
