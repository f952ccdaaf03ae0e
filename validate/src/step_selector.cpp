#include "mlasim/validate/step_selector.h"

#include <algorithm>

#include "mlasim/model/input_error.h"
#include "mlasim/validate/name_regex.h"
#include "mlasim/validate/step_rules.h"

namespace mlasim::validate {

StepSelector::StepSelector(const std::vector<std::string>& selectors) {
  for (const std::string& s : selectors) {
    if (s.rfind("re:", 0) == 0)
      patterns_.push_back(name_regex(s.substr(3), "re:"));
    else
      classes_.push_back(s);
  }
}

bool StepSelector::operator()(const StepKernel& k) const {
  if (std::find(classes_.begin(), classes_.end(), k.kernel_class) != classes_.end()) return true;
  if (patterns_.empty()) return false;
  const std::string head = k.name.substr(0, StepRules::kMaxMatchedChars);
  return std::any_of(patterns_.begin(), patterns_.end(),
                     [&](const std::regex& p) { return std::regex_search(head, p); });
}

std::string check_step_selector(const std::string& selector, const std::string& field) {
  if (selector.rfind("re:", 0) == 0) {
    name_regex(selector.substr(3), field);
    return selector;
  }
  check_step_class(selector, field, "re:REGEX");
  return selector;
}

}  // namespace mlasim::validate
