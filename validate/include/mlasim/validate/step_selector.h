#pragma once
// Which kernels of a step an edit or an op-bytes entry names (docs/step.md §3): step classes, or one re:REGEX found
// in the kernel's name (its first StepRules::kMaxMatchedChars characters, as the rules match names).
#include <regex>
#include <string>
#include <vector>

#include "mlasim/validate/step_analysis.h"

namespace mlasim::validate {

class StepSelector {
 public:
  // `selectors`: class names and re:REGEX entries, each checked already (check_step_class, name_regex).
  explicit StepSelector(const std::vector<std::string>& selectors);
  bool operator()(const StepKernel& k) const;

 private:
  std::vector<std::string> classes_;
  std::vector<std::regex> patterns_;
};

// One selector as a data file writes it: a step class or re:REGEX; throws InputError(field, ...) naming the forms.
std::string check_step_selector(const std::string& selector, const std::string& field);

}  // namespace mlasim::validate
