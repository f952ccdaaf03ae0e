#pragma once
// A scenario: one workload and the named policies compared on it (the explorer shows A and B), kept as JSON in
// data/scenarios/. The CLI replays one with `--scenario FILE`; the explorer opens and saves the same files.
//
//   {"name": "...", "description": "...", "workload": {...workload_to_json...},
//    "policies": {"A": "aiter-v1:max_split_per_batch=16", "B": "aiter-v1:max_split_per_batch=-1"}}
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/sim/workload.h"

namespace mlasim::sim {

struct NamedPolicy {
  std::string name;  // "A", "B", or any label
  std::string spec;  // policy spec NAME[:key=value,...]
  bool operator==(const NamedPolicy&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  Workload workload;
  // In the file's key order (sorted by name); at least one.
  std::vector<NamedPolicy> policies = {{"A", "aiter-v1:max_split_per_batch=16"},
                                       {"B", "aiter-v1:max_split_per_batch=-1"}};

  // The spec of policy `name`, else of the policy at `fallback_index` (clamped to the last one).
  const std::string& spec(const std::string& name, size_t fallback_index) const;
  bool operator==(const Scenario&) const = default;
};

nlohmann::json scenario_to_json(const Scenario& s);
// Throws InputError naming the field by its path, e.g. "workload.batch.count: must be 1..65536, got 0".
Scenario scenario_from_json(const nlohmann::json& j);

// File I/O. Errors name the file: InputError("scenario", "PATH: ..."); saving writes the whole file or nothing.
Scenario load_scenario(const std::string& path);
void save_scenario(const Scenario& s, const std::string& path);

}  // namespace mlasim::sim
