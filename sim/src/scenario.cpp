#include "mlasim/sim/scenario.h"

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"

namespace mlasim::sim {

using nlohmann::json;

namespace {
constexpr size_t kMaxPolicies = 64;
}

const std::string& Scenario::spec(const std::string& policy_name, size_t fallback_index) const {
  for (const NamedPolicy& p : policies)
    if (p.name == policy_name) return p.spec;
  return policies.at(std::min(fallback_index, policies.size() - 1)).spec;
}

json scenario_to_json(const Scenario& s) {
  json j;
  if (!s.name.empty()) j["name"] = s.name;
  if (!s.description.empty()) j["description"] = s.description;
  j["workload"] = workload_to_json(s.workload);
  json policies = json::object();
  for (const NamedPolicy& p : s.policies) policies[p.name] = p.spec;
  j["policies"] = std::move(policies);
  return j;
}

Scenario scenario_from_json(const json& j) {
  const JsonFields top(j, "", {"name", "description", "workload", "policies"}, "scenario");
  Scenario s;
  s.name = top.text("name", "");
  s.description = top.text("description", "");
  if (!top.has("workload")) throw InputError("workload", "is missing; a scenario needs a workload and policies A, B");
  s.workload = workload_from_json(top.at("workload"), "workload");
  if (!top.has("policies")) throw InputError("policies", "is missing; give policy specs A and B");
  const json& policies = top.at("policies");
  if (!policies.is_object() || policies.empty() || policies.size() > kMaxPolicies)
    throw InputError("policies", "must be an object of 1.." + std::to_string(kMaxPolicies) +
                                     " named policy specs, e.g. {\"A\": \"aiter-v1\", \"B\": \"flashmla\"}");
  s.policies.clear();
  for (const auto& [name, spec] : policies.items()) {
    if (!spec.is_string() || spec.get<std::string>().empty())
      throw InputError("policies." + name, "must be a policy spec, e.g. aiter-v1");
    s.policies.push_back({name, spec.get<std::string>()});
  }
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_json_file(path, "scenario", [](const json& j) { return scenario_from_json(j); });
}

void save_scenario(const Scenario& s, const std::string& path) {
  write_file_atomically(path, scenario_to_json(s).dump(2) + "\n", "scenario");
}

}  // namespace mlasim::sim
