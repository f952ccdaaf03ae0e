#include "mlasim/sim/metadata_cost.h"

#include <filesystem>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::sim {

const MetadataCostModel::Implementation& MetadataCostModel::at(const std::string& name) const {
  for (const Implementation& i : implementations)
    if (i.name == name) return i;
  throw InputError("metadata", "unknown planner implementation '" + name + "'; known: " + join_names(names()));
}

std::vector<std::string> MetadataCostModel::names() const {
  std::vector<std::string> out;
  for (const Implementation& i : implementations) out.push_back(i.name);
  return out;
}

MetadataCostModel metadata_cost_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw InputError("metadata-cost", "must be a JSON object");
  const JsonFields top(j, "", {"description", "model", "implementations"});
  const nlohmann::json& list = top.at("implementations");
  if (!list.is_object() || list.empty())
    throw InputError("metadata-cost", "implementations: must be an object of one entry per implementation");
  MetadataCostModel m;
  for (const auto& [name, entry] : list.items()) {
    if (!entry.is_object()) throw InputError("metadata-cost", "implementations." + name + ": must be an object");
    const JsonFields f(entry, "implementations." + name,
                       {"fixed_us", "per_cluster_us", "per_item_us", "kind", "source"});
    MetadataCostModel::Implementation impl;
    impl.name = name;
    impl.fixed_us = f.real("fixed_us", 0, 0, 1e6);
    impl.per_cluster_us = f.real("per_cluster_us", 0, 0, 1e3);
    impl.per_item_us = f.real("per_item_us", 0, 0, 1e3);
    impl.kind = f.text("kind", "");
    impl.source = f.text("source", "");
    m.implementations.push_back(impl);
  }
  return m;
}

MetadataCostModel load_metadata_cost(const std::string& path) {
  const std::string file =
      path.empty() ? (std::filesystem::path(data_dir()) / "planner" / "metadata_cost.json").string() : path;
  MetadataCostModel m = parse_json_file(file, "metadata-cost", metadata_cost_from_json);
  m.origin = file;
  return m;
}

int metadata_items(const Plan& plan) { return plan.num_works() + plan.num_requests; }

double metadata_us(const MetadataCostModel::Implementation& impl, const Plan& plan) {
  return impl.fixed_us + impl.per_cluster_us * plan.num_clusters() + impl.per_item_us * metadata_items(plan);
}

}  // namespace mlasim::sim
