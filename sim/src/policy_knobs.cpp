#include "mlasim/sim/policy_knobs.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::sim {

KnobValues::KnobValues(const std::vector<KnobInfo>& knobs, const PolicySpec& spec) : spec_(spec) {
  for (const auto& [key, text] : spec.knobs) {
    bool declared = false;
    for (const KnobInfo& k : knobs) declared = declared || k.name == key;
    if (!declared) {
      std::vector<std::string> names;
      for (const KnobInfo& k : knobs) names.push_back(k.name);
      throw InputError("policy", "'" + spec.name + "' has no knob '" + key + "'; knobs: " + join_names(names));
    }
  }
  for (const KnobInfo& k : knobs) {
    const auto given = spec.knobs.find(k.name);
    const std::string& text = given != spec.knobs.end() ? given->second : k.default_value;
    auto parsed = k.domain.parse(text);
    if (!parsed) throw InputError(k.name, "must be " + k.domain.describe() + ", got " + text);
    values_.emplace(k.name, std::move(*parsed));
  }
}

const KnobValue& KnobValues::value(const std::string& knob) const {
  const auto it = values_.find(knob);
  if (it == values_.end()) mismatch(knob, "is not declared");
  return it->second;
}

int64_t KnobValues::integer_of(const std::string& knob, const KnobValue& v) {
  if (!std::holds_alternative<int64_t>(v)) mismatch(knob, "holds no integer");
  return std::get<int64_t>(v);
}

double KnobValues::real(const std::string& knob) const {
  const KnobValue& v = value(knob);
  if (!std::holds_alternative<double>(v)) mismatch(knob, "holds no real number");
  return std::get<double>(v);
}

const std::string& KnobValues::word(const std::string& knob) const {
  const KnobValue& v = value(knob);
  if (!std::holds_alternative<std::string>(v)) mismatch(knob, "holds no word");
  return std::get<std::string>(v);
}

void KnobValues::mismatch(const std::string& knob, const std::string& what) {
  throw std::logic_error("policy knob '" + knob + "' " + what + " (the knob table and the policy disagree)");
}

}  // namespace mlasim::sim
