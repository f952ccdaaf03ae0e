#pragma once
// What building a plan's metadata costs a decode step, by implementation (docs/step.md §5). A planner walks the
// CUs (clusters) and the requests it cuts into works, so its time is modelled as
//     fixed_us + per_cluster_us x clusters + per_item_us x (works + requests)
// with each implementation's two numbers from measurements (data/planner/metadata_cost.json, with provenance):
//   host             our planner (aiter-v1's algorithm, C++) on the host CPU, measured by bench/planner_bench;
//                    a host-built plan is ready before the step's first kernel only if the GPU waits for it
//   device-serial    AITER's kn_get_mla_metadata_v1_2: one wavefront scans the CUs and works in series
//   device-parallel  AITER's two-phase parallel planner (ROCm/aiter #3465)
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlasim/sim/plan.h"

namespace mlasim::sim {

struct MetadataCostModel {
  struct Implementation {
    std::string name;
    double fixed_us = 0;
    double per_cluster_us = 0;
    double per_item_us = 0;
    std::string kind;    // measured, published
    std::string source;  // where the numbers come from
  };
  std::string origin;  // the file
  std::vector<Implementation> implementations;

  const Implementation& at(const std::string& name) const;  // InputError("metadata", ...) naming the known ones
  std::vector<std::string> names() const;
};

// Reads data/planner/metadata_cost.json (or `path`); InputError("metadata-cost", "FILE: ...") naming the field.
MetadataCostModel load_metadata_cost(const std::string& path = "");
MetadataCostModel metadata_cost_from_json(const nlohmann::json& j);

// The items a planner walks for `plan` besides its clusters: its works and requests.
int metadata_items(const Plan& plan);
double metadata_us(const MetadataCostModel::Implementation& impl, const Plan& plan);

}  // namespace mlasim::sim
