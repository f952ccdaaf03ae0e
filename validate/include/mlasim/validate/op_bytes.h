#pragma once
// The bytes each kernel of a step reads and writes, as the user knows them from the ops' shapes (a trace has
// neither): data, one file per stack and batch, read by `mlasim step --op-bytes FILE` so that a fuse or remove edit
// can weigh what it changes in L2 for the attention after it (model/l2_prior_writes.h, docs/step.md §3).
//
//   {"description": "...",
//    "ops": [{"match": "re:q_absorb_bmm_kernel", "read_bytes": 17301504, "written_bytes": 2097152},
//            {"match": "copy", "read_bytes": 16777216, "written_bytes": 16777216},
//            {"match": "re:rope_kv_write", "read_bytes_per_request": 17536, "written_bytes_per_request": 17536}]}
//
// `match` is a step class or re:REGEX on the kernel's name; the first entry that matches a kernel gives its bytes:
// read_bytes + read_bytes_per_request x the step's requests, and the same for the written ones (all default 0); with
// several query tokens per request (--qlen), a request's bytes are those of all of them. A kernel no entry matches
// has no bytes.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlasim/model/l2_prior_writes.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_selector.h"

namespace mlasim::validate {

struct OpBytesEntry {
  std::string match;
  StepSelector selector;
  double read_bytes = 0, read_bytes_per_request = 0;
  double written_bytes = 0, written_bytes_per_request = 0;
};

struct OpBytesRules {
  std::string origin;  // the file
  std::string description;
  std::vector<OpBytesEntry> entries;
  // The first matching entry's bytes at `requests`, in MB; none where no entry matches. Not for concurrent calls
  // (it remembers the names it matched, as StepRules::classify does); `entries` is not to change after the first.
  std::optional<OpBytes> of(const StepKernel& kernel, int requests) const;

 private:
  // The entry each kernel name and class matched (-1: none): a trace repeats few names many times.
  mutable std::unordered_map<std::string, int> matched_;
};

// Parses op-bytes JSON; errors are InputError("op-bytes", "ORIGIN: ops[2].read_bytes: ...").
OpBytesRules op_bytes_from_json(const std::string& text, const std::string& origin);
// The same, from a file.
OpBytesRules load_op_bytes(const std::string& path);

}  // namespace mlasim::validate
