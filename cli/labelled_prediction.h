#pragma once
// Predictions labelled with their configuration (GPU, batch, context, clusters, policy), as CSV rows and JSON
// objects: the one layout predict, compare and sweep write, so their files read back the same way.
#include <nlohmann/json.hpp>
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/sweep.h"

namespace mlasim::cli {

struct LabelledMetrics {
  std::string gpu;
  std::string policy;   // canonical spec
  int batch = 0;
  std::string context;  // tokens per request, or "ragged"
  int clusters = 0;     // clusters available; 0 = every CU
  sim::Metrics metrics;
};

// The context column of a batch: the tokens per request when they are all equal, else "ragged".
std::string context_label(const DecodeBatch& batch);

struct LabelledPrediction {
  sim::Plan plan;
  sim::Prediction prediction;
  LabelledMetrics labelled;
};

// Plans `batch` on `gpu` with the policy `spec` and simulates it with the profile's cost parameters.
LabelledPrediction predict_labelled(const DecodeBatch& batch, const Gpu& gpu, int clusters, const std::string& spec);

// The configuration columns, then metric_names().
std::string labelled_csv_header();
std::string labelled_csv_row(const LabelledMetrics& m);
// {"gpu", "policy", "batch", "context", "clusters", then every metric}.
nlohmann::json labelled_json(const LabelledMetrics& m);

// A sweep's points, labelled: the whole CSV file (header and one row per point, rows formatted on all cores),
// or a JSON array of labelled_json objects.
LabelledMetrics labelled_point(const sim::SweepGrid& grid, const sim::SweepResult& result, size_t i);
std::string sweep_csv(const sim::SweepGrid& grid, const sim::SweepResult& result);
nlohmann::json sweep_json(const sim::SweepGrid& grid, const sim::SweepResult& result);

}  // namespace mlasim::cli
