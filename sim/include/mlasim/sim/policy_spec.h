#pragma once
// Policy spec strings, "NAME[:key=value,...]", e.g. "aiter-v1:max_split_per_batch=16".
#include <map>
#include <string>
#include <string_view>

namespace mlasim::sim {

struct PolicySpec {
  std::string name;
  std::map<std::string, std::string> knobs;  // as written; each policy validates its own

  // Canonical text: name, then the knobs sorted by key.
  std::string to_string() const;
};

// Parses a spec; throws InputError("policy", ...) for empty names, missing '=' or repeated keys.
PolicySpec parse_policy_spec(std::string_view text);

}  // namespace mlasim::sim
