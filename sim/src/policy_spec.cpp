#include "mlasim/sim/policy_spec.h"

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::sim {

std::string PolicySpec::to_string() const {
  std::string s = name;
  char sep = ':';
  for (const auto& [k, v] : knobs) {
    s += sep + k + "=" + v;
    sep = ',';
  }
  return s;
}

PolicySpec parse_policy_spec(std::string_view text) {
  PolicySpec spec;
  const size_t colon = text.find(':');
  spec.name = trim(text.substr(0, colon));
  if (spec.name.empty())
    throw InputError("policy", "empty policy name in '" + std::string(text) + "'; expected NAME[:key=value,...]");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError("policy", "knob '" + trim(item) + "' in '" + std::string(text) + "' needs key=value");
    const std::string key = trim(item.substr(0, eq));
    const std::string value = trim(item.substr(eq + 1));
    if (key.empty() || value.empty())
      throw InputError("policy", "knob '" + trim(item) + "' in '" + std::string(text) + "' needs key=value");
    if (!spec.knobs.emplace(key, value).second)
      throw InputError("policy", "knob '" + key + "' is given twice in '" + std::string(text) + "'");
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) throw InputError("policy", "trailing ',' in '" + std::string(text) + "'");
  }
  return spec;
}

}  // namespace mlasim::sim
