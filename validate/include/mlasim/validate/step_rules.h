#pragma once
// Name rules that sort a trace's kernels into the classes of an MLA decode step (docs/step.md): data, one file per
// serving stack (data/step/*.json), so a new stack or a renamed kernel is a new rule, not new code.
//
//   {"name": "vllm-rocm-aiter", "description": "...", "sources": ["..."],
//    "rules": [{"class": "mla_stage1", "match": "^mla_a8w8.*"}, ...],
//    "batch_from": {"match": "concat_and_cache_mla", "grid_axis": "x", "counts": "tokens"}}
//
// The first rule whose ECMAScript regex is found in the kernel's name decides its class; a kernel no rule matches
// is "other" (the rest of the layer: GEMMs, norms, MoE, sampling).
//
// batch_from (optional) reads each step's batch from a launch argument: the grid, along grid_axis, of the step's
// first kernel that has a grid and whose name the regex matches, over divide_by (default 1). `counts` says what
// that number is: "requests" (the default: one block per request) or "tokens" (one block per query token, as
// vLLM's KV-cache write launches; the requests are then the tokens over the workload's query tokens per request).
// A step without such a kernel, a count that divide_by does not divide, or one past 65536 keeps the workload
// flags' batch.
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mlasim::validate {

// The classes, in report order; "other" is last.
const std::vector<std::string>& step_classes();
// Throws InputError(field, ...) unless `name` is a class of step_classes(); the message names the classes, and
// `other_forms` (e.g. "re:REGEX") where the field takes more.
void check_step_class(const std::string& name, const std::string& field, const std::string& other_forms = "");

struct StepRule {
  std::string kernel_class;
  std::string match;  // the regex as written
  std::regex pattern;
};

// Where a step's batch is read from (StepRules::batch_from).
struct BatchFromGrid {
  std::string match;  // the regex as written; empty: the rules read no batch
  std::regex pattern;
  int axis = 0;  // 0, 1, 2 for x, y, z
  long long divide_by = 1;
  bool counts_tokens = false;                          // the count is query tokens, not requests
  std::string describe() const;                        // "grid.x of /concat_and_cache_mla/" (" / N" when divided)
  bool matches(const std::string& kernel_name) const;  // on the name's first kMaxMatchedChars, as the rules
};

class StepRules {
 public:
  static constexpr size_t kMaxMatchedChars = 1024;  // of a kernel name, from its start
  std::string name;
  std::string description;
  std::vector<StepRule> rules;
  BatchFromGrid batch_from;

  // The class of a kernel name; the same name is matched once (a trace repeats few names many times).
  const std::string& classify(const std::string& kernel_name) const;

 private:
  mutable std::unordered_map<std::string, std::string> cache_;
};

// Parses rules JSON; errors name the field by its path ("rules[3].match: ...").
StepRules step_rules_from_json(const std::string& text, const std::string& origin);
// `name_or_path`: a file of data/step (its name without .json) or a path to a rules JSON.
StepRules load_step_rules(const std::string& name_or_path);
// The rule sets in data/step, by name.
std::vector<std::string> step_rule_names();

}  // namespace mlasim::validate
