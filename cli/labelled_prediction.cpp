#include "labelled_prediction.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "mlasim/model/cost_model.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/policy_spec.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::cli {

std::string context_label(const DecodeBatch& batch) {
  for (int len : batch.kv_lens)
    if (len != batch.kv_lens.front()) return "ragged";
  return batch.kv_lens.empty() ? "ragged" : std::to_string(batch.kv_lens.front());
}

LabelledPrediction predict_labelled(const DecodeBatch& batch, const Gpu& gpu, int clusters, const std::string& spec) {
  LabelledPrediction p;
  p.plan = sim::make_policy(spec)->plan({batch, gpu, clusters});
  p.prediction = sim::simulate(p.plan, batch, gpu, cost_params_for(gpu));
  p.labelled = {gpu.name, p.plan.policy, batch.size(), context_label(batch), clusters, p.prediction.metrics};
  return p;
}

std::string labelled_csv_header() { return "gpu,batch,context,clusters,policy," + sim::metrics_csv_header(); }

std::string labelled_csv_row(const LabelledMetrics& m) {
  return fmt::format("{},{},{},{},{},{}", validate::csv_cell(m.gpu), m.batch, m.context, m.clusters,
                     validate::csv_cell(m.policy), sim::metrics_csv_row(m.metrics));
}

nlohmann::json labelled_json(const LabelledMetrics& m) {
  nlohmann::json j = nlohmann::json::object();
  j["gpu"] = m.gpu;
  j["policy"] = m.policy;
  j["batch"] = m.batch;
  if (m.context == "ragged") {
    j["context"] = m.context;
  } else {
    j["context"] = std::stoi(m.context);
  }
  j["clusters"] = m.clusters;
  j.update(sim::metrics_to_json(m.metrics));
  return j;
}

LabelledMetrics labelled_point(const sim::SweepGrid& grid, const sim::SweepResult& result, size_t i) {
  const sim::SweepPoint& p = result.points[i];
  return {grid.gpus[static_cast<size_t>(p.gpu)].name, result.policies[static_cast<size_t>(p.policy)], p.batch,
          std::to_string(p.context), p.clusters, result.metrics[i]};
}

std::string sweep_csv(const sim::SweepGrid& grid, const sim::SweepResult& result) {
  // Shortest-exact number formatting is a fifth of a sweep's time: spread it over the cores as well.
  std::vector<std::string> rows(result.points.size());
  tbb::parallel_for(size_t{0}, rows.size(), [&](size_t i) { rows[i] = labelled_csv_row(labelled_point(grid, result, i)); });
  std::string csv = labelled_csv_header() + "\n";
  size_t size = csv.size();
  for (const std::string& r : rows) size += r.size() + 1;
  csv.reserve(size);
  for (const std::string& r : rows) (csv += r) += '\n';
  return csv;
}

nlohmann::json sweep_json(const sim::SweepGrid& grid, const sim::SweepResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < result.points.size(); ++i) rows.push_back(labelled_json(labelled_point(grid, result, i)));
  return rows;
}

}  // namespace mlasim::cli
