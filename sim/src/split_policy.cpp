#include "mlasim/sim/split_policy.h"

#include <string>

#include "mlasim/model/input_error.h"

namespace mlasim::sim {

Plan SplitPolicy::plan(const PlanRequest& request) const {
  Plan p = build_plan(request);
  p.policy = spec_;
  // build_plan has checked the request's clusters against the GPU.
  p.cu_limit = request.clusters > 0 ? request.clusters : request.gpu.num_cu;
  return p;
}

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
  return info->make(KnobValues(info->knobs, spec));
}

std::unique_ptr<SplitPolicy> make_policy(std::string_view spec_text) {
  return make_policy(parse_policy_spec(spec_text));
}

}  // namespace mlasim::sim
