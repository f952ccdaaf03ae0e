#pragma once
// Importers for measurements made elsewhere, so `mlasim report` and `mlasim calibrate` read them as they come:
//
//  - aiter-log: the log of AITER's op_tests/test_mla_persistent.py. After the line
//    "mla_persistent summary (markdown):" comes a pandas markdown table, one row per configuration, with columns
//    ctx_lens, batch_size, nhead, dtype, kvtype, page_size, varlen, decode_qlen, max_split_per_batch,
//    non_persistent_mode, ..., decode:asm_576 (the kernel time in us), ... (an index column may come first). The
//    same table written by pandas to_csv is read too. Other log lines are ignored.
//  - rocprof: a rocprofv3 kernel trace (kernel_trace.csv: Kernel_Name, Start_Timestamp, End_Timestamp in ns, ...)
//    of one workload the caller names: the MLA stage-1 launches, each paired with the reduce that follows it,
//    give one row per stage-1 kernel with the medians over the repeats.
//  - csv: the project's measurement CSV or the public measurements format (parse_measurement_csv).
#include <string>
#include <string_view>
#include <vector>

#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

enum class MeasurementFormat { automatic, csv, aiter_log, rocprof };

// "auto", "csv", "aiter-log", "rocprof"; throws InputError(field, ...) for another word.
MeasurementFormat parse_measurement_format(std::string_view text, const std::string& field);
std::string_view measurement_format_name(MeasurementFormat f);

// The format of a file's text: aiter-log when it holds the summary marker or an op-test table header (markdown or
// CSV with ctx_lens and decode:asm_576), rocprof when its header has Kernel_Name, Start_Timestamp and
// End_Timestamp, else csv.
MeasurementFormat detect_measurement_format(std::string_view text);

struct MeasurementImport {
  std::vector<MeasurementRow> rows;
  std::vector<std::string> notes;  // "<origin> line N: why a row was left out"
};

// What the importers cannot read from the file itself.
struct ImportContext {
  std::string gpu = "mi355x";  // the profile every imported row is attributed to
  int num_cu = 0;  // its CUs: the op test caps max_split_per_batch at ceil(CUs / batch) for nhead >= 128 (0: no cap)
  // rocprof: the workload the trace measured (batch and context or kv_lens, heads, qo_len, dtypes, page size,
  // clusters) and the policy that planned it; its gpu, times and provenance are filled in.
  MeasurementRow workload;
};

// AITER op-test log or its CSV table. Rows with varlen true are left out with a note (the script draws every
// request's KV length with random.uniform, unseeded, and the log does not record them), and so are rows whose
// decode:asm_576 is the script's 1e12 "not run" value. Throws InputError("<column>", "<origin> line N, column C
// (<column>): ...") for a malformed cell and InputError("aiter-log", ...) when the file holds no table.
MeasurementImport import_aiter_log(std::string_view text, const std::string& origin, const ImportContext& context);

// rocprofv3 kernel trace of ctx.workload. Throws InputError("<column>", "<origin> line N, column C (<column>): ...")
// for a malformed cell, InputError("rocprof", ...) for a missing column or a trace without an MLA stage-1 kernel.
MeasurementImport import_rocprof_trace(std::string_view text, const std::string& origin, const ImportContext& context);

// Reads `text` in `format` (automatic: detected).
MeasurementImport import_measurements(std::string_view text, const std::string& origin, MeasurementFormat format,
                                      const ImportContext& context);
// Reads the file; InputError("measurements", ...) when it cannot be read.
MeasurementImport import_measurement_file(const std::string& path, MeasurementFormat format,
                                          const ImportContext& context);

// Kernel-name classes of a rocprof trace, matched on the name without namespace, template and argument list:
// stage 1 = mla_*_ps*, mla_dec_stage1*, *mla*decode*; reduce = kn_mla_reduce_v1*, _fwd_kernel_stage2*.
bool is_mla_stage1_kernel(std::string_view name);
bool is_mla_reduce_kernel(std::string_view name);

}  // namespace mlasim::validate
