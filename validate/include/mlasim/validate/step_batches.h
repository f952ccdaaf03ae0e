#pragma once
// Each decode step's own batch, as a serving engine logs it, for `mlasim step --step-batches FILE`: a trace's launch
// grids give a step's request count at most, never its requests' context lengths, and a policy edit's plans depend
// on both. One entry per step of the trace, in order, the skipped ones included:
//
//   {"description": "...",
//    "steps": [{"kv_lens": [4100, 517, 9000]},               // KV tokens per request
//              {"kv_lens": [4101, 518], "qo_lens": [1, 2]},  // and query tokens (default: the flags' per request)
//              {"requests": 16, "context": 4096}]}           // a uniform batch
//
// An entry replaces the flags' requests, KV and query lengths; heads, dtypes, page size and granule stay the flags'.
// Dense batches only: a sparse or two-scope batch's rows per request come from the flags.
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"

namespace mlasim::validate {

struct StepBatches {
  std::string origin;  // the file
  std::string description;
  std::vector<DecodeBatch> steps;  // by the step's index in the trace
};

// At most this many requests over a file's entries (32 MB of lengths, held a few times over while they are planned):
// a server's log of thousands of steps of hundreds of requests stays far below it, and a file cannot ask for more.
constexpr long long kMaxStepBatchesRequests = 1 << 22;

// Why a file of `entries` entries does not fit a trace of `trace_steps` steps; empty where it does.
std::string entries_per_step_mismatch(size_t entries, int trace_steps);

// Each entry's first equal entry (the same KV and query lengths): steps of equal batches share one plan, and the
// report counts the batches the steps ran.
std::vector<int> first_equal_entries(const StepBatches& batches);

// Parses step-batches JSON against the flags' batch `flags`, for a trace of `trace_steps` steps (0: not checked
// here; apply_step_edits checks it), which the entries must match before any is expanded; errors are
// InputError("step-batches", "ORIGIN: steps[3].kv_lens: ...").
StepBatches step_batches_from_json(const std::string& text, const std::string& origin, const DecodeBatch& flags,
                                   int trace_steps = 0);
// The same, from a file.
StepBatches load_step_batches(const std::string& path, const DecodeBatch& flags, int trace_steps = 0);

}  // namespace mlasim::validate
