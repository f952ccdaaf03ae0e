#pragma once
// Metrics, Timelines and Predictions as text, JSON and CSV: the one formatter the CLI (predict, compare,
// sweep) and the GUI share. Keys are the Metrics member names; docs/model.md §6 lists them with units.
//
//   Metrics m = simulate(plan, batch, gpu, params).metrics;
//   std::string text = metrics_text(m);                  // "stage1_us          45.10\n..."
//   nlohmann::json j = metrics_to_json(m);               // {"stage1_us": 45.1, ...}
//   std::string csv = metrics_csv_header() + "\n" + metrics_csv_row(m) + "\n";
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

// The metric names in output order (also the JSON keys and CSV columns).
const std::vector<std::string>& metric_names();

// One "name  value" line per metric, aligned; splits_per_request is summarised when long
// ("65 65 65 65", or "1..4, mean 1.53 over 1024 requests").
std::string metrics_text(const Metrics& m);

nlohmann::json metrics_to_json(const Metrics& m);
// Reads metrics_to_json's object back; throws InputError naming a missing or mistyped key.
Metrics metrics_from_json(const nlohmann::json& j);

// CSV: no quoting is ever needed; doubles are written in their shortest exact form, so a row reads back
// bit for bit; splits_per_request is one cell of ';'-separated counts.
std::string metrics_csv_header();
std::string metrics_csv_row(const Metrics& m);
// The row as cells, for callers that put configuration columns in front (sweep).
std::vector<std::string> metrics_csv_cells(const Metrics& m);
// Reads the metrics from a CSV header and row; other columns are ignored. Throws InputError naming a missing
// column or a bad value.
Metrics metrics_from_csv(const std::string& header, const std::string& row);

// {num_clusters, rows_per_cu, stage1_us, reduce_us, rows: [[box, ...], ...], reduce: [box, ...]}, each box an
// object with the TimelineBox / ReduceBox member names.
nlohmann::json timeline_to_json(const Timeline& t);
// {"metrics": ..., "timeline": ...}
nlohmann::json prediction_to_json(const Prediction& p);

}  // namespace mlasim::sim
