#pragma once
// One report: labelled predictions (ReportRow), a comparison of two (Comparison, speedup defined once), and
// writers for text, JSON and CSV behind one interface (ReportWriter), so `predict`, `compare`, `sweep` and the
// explorer's exports write the same layouts.
//
//   const auto writer = make_report_writer("csv");
//   std::string csv = writer->comparison(Comparison::of(report_row(a, ctx), report_row(b, ctx)));
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

// A prediction with the configuration it belongs to.
struct ReportRow {
  std::string gpu;
  std::string policy;  // canonical spec (or "imported: FILE")
  int batch = 0;
  std::string context;  // tokens per request, or "ragged"
  int clusters = 0;     // clusters available; 0 = every CU
  Metrics metrics;
  bool operator==(const ReportRow&) const = default;
};

ReportRow report_row(const Evaluation& e, const WorkloadContext& ctx);

// A's kernel time over B's: above 1 means B is faster; 0 when B's time is not positive.
double speedup(const Metrics& a, const Metrics& b);

struct Comparison {
  ReportRow a;
  ReportRow b;
  double speedup = 0;  // speedup(a.metrics, b.metrics)
  static Comparison of(ReportRow a, ReportRow b);
};

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // One prediction (predict). Text: the metrics, one "name  value" line each.
  virtual std::string row(const ReportRow& r) const = 0;
  // Many predictions (sweep). Text: an aligned table.
  virtual std::string table(std::span<const ReportRow> rows) const = 0;
  // Two predictions side by side and the speedup (compare, the explorer's metrics export).
  virtual std::string comparison(const Comparison& c) const = 0;
};

// "text", "json" or "csv"; InputError("format", ...) otherwise.
std::unique_ptr<ReportWriter> make_report_writer(std::string_view format);

// The pieces the writers are made of, for callers that extend a row (e.g. predict's JSON with a timeline):
// the configuration columns then every metric field.
std::string report_csv_header();
std::string report_csv_row(const ReportRow& r);
nlohmann::json report_json(const ReportRow& r);

}  // namespace mlasim::sim
