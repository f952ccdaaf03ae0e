#include "mlasim/sim/split_policy.h"

#include <charconv>
#include <cmath>
#include <string>

#include "mlasim/model/input_error.h"

namespace mlasim::sim {
namespace {

std::string fmt_num(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  std::string s = std::to_string(v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

std::string allowed(const KnobInfo& k) {
  std::string s;
  for (const auto& c : k.choices) s += c + ", ";
  if (k.type == KnobInfo::Type::choice) return s.substr(0, s.size() - 2);
  if (k.name == "max_split_per_batch") return "-1, " + s + "1.." + fmt_num(k.max);
  return s + fmt_num(k.min) + ".." + fmt_num(k.max);
}

bool parse_long(const std::string& s, long& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

bool parse_double(const std::string& s, double& out) {
  try {
    size_t used = 0;
    out = std::stod(s, &used);
    return used == s.size() && std::isfinite(out);
  } catch (const std::exception&) {
    return false;
  }
}

void check_knob(const KnobInfo& k, const std::string& v) {
  const auto bad = [&] { throw InputError(k.name, "must be " + allowed(k) + ", got " + v); };
  for (const auto& c : k.choices)
    if (v == c) return;
  if (k.type == KnobInfo::Type::choice) bad();
  if (k.type == KnobInfo::Type::integer) {
    long x;
    if (!parse_long(v, x) || x < k.min || x > k.max) bad();
    if (k.name == "max_split_per_batch" && x == 0) bad();
    return;
  }
  double x;
  if (!parse_double(v, x) || x < k.min || x > k.max) bad();
}

}  // namespace

const PolicyInfo* find_policy(const std::string& name) {
  for (const auto& p : policy_registry())
    if (p.name == name) return &p;
  return nullptr;
}

std::unique_ptr<SplitPolicy> make_policy(const PolicySpec& spec) {
  const PolicyInfo* info = find_policy(spec.name);
  if (!info) {
    std::string names;
    for (const auto& p : policy_registry()) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("policy", "unknown policy '" + spec.name + "'; known: " + names);
  }
  std::map<std::string, std::string> values;
  for (const auto& k : info->knobs) values[k.name] = k.default_value;
  for (const auto& [key, value] : spec.knobs) {
    auto it = values.find(key);
    if (it == values.end()) {
      std::string names;
      for (const auto& k : info->knobs) names += (names.empty() ? "" : ", ") + k.name;
      throw InputError("policy", "'" + info->name + "' has no knob '" + key + "'; knobs: " + names);
    }
    it->second = value;
  }
  for (const auto& k : info->knobs) check_knob(k, values[k.name]);
  return info->make(values);
}

std::unique_ptr<SplitPolicy> make_policy(std::string_view spec_text) {
  return make_policy(parse_policy_spec(spec_text));
}

long knob_int(const std::map<std::string, std::string>& knobs, const std::string& key) {
  long x = 0;
  parse_long(knobs.at(key), x);
  return x;
}

double knob_real(const std::map<std::string, std::string>& knobs, const std::string& key) {
  double x = 0;
  parse_double(knobs.at(key), x);
  return x;
}

}  // namespace mlasim::sim
