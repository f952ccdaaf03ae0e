#include "mlasim/sim/report.h"

#include <fmt/format.h>
#include <vector>

#include "mlasim/model/csv_cell.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/metric_fields.h"
#include "mlasim/sim/metrics_format.h"
#include "parallel_chunks.h"

namespace mlasim::sim {
namespace {

using nlohmann::json;

constexpr const char* kConfigColumns[] = {"gpu", "batch", "context", "clusters", "policy"};

std::string json_text(const json& j, int indent) { return j.dump(indent) + "\n"; }

class TextWriter final : public ReportWriter {
 public:
  std::string row(const ReportRow& r) const override { return metrics_text(r.metrics); }

  std::string table(std::span<const ReportRow> rows) const override {
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> header(std::begin(kConfigColumns), std::end(kConfigColumns));
    for (const MetricField& f : metric_fields()) header.emplace_back(f.name);
    cells.push_back(header);
    for (const ReportRow& r : rows) {
      std::vector<std::string> line{r.gpu, std::to_string(r.batch), r.context, std::to_string(r.clusters), r.policy};
      for (const MetricField& f : metric_fields()) line.push_back(f.text(r.metrics));
      cells.push_back(std::move(line));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& line : cells)
      for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
    std::string out;
    for (const auto& line : cells) {
      std::string text;
      for (size_t c = 0; c < line.size(); ++c) text += fmt::format("{:<{}}  ", line[c], width[c]);
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  }

  std::string comparison(const Comparison& c) const override {
    std::string out = fmt::format("{:<20} {:<32} {}\n", "", "A", "B");
    out += fmt::format("{:<20} {:<32} {}\n", "policy", c.a.policy, c.b.policy);
    if (c.a.gpu != c.b.gpu) out += fmt::format("{:<20} {:<32} {}\n", "gpu", c.a.gpu, c.b.gpu);
    for (const MetricField& f : metric_fields())
      out += fmt::format("{:<20} {:<32} {}\n", f.name, f.text(c.a.metrics), f.text(c.b.metrics));
    return out + fmt::format("speedup (A kernel_us / B kernel_us): {:.3f}\n", c.speedup);
  }
};

class JsonWriter final : public ReportWriter {
 public:
  std::string row(const ReportRow& r) const override { return json_text(report_json(r), 2); }
  std::string table(std::span<const ReportRow> rows) const override {
    json all = json::array();
    for (const ReportRow& r : rows) all.push_back(report_json(r));
    return json_text(all, 1);
  }
  std::string comparison(const Comparison& c) const override {
    return json_text({{"a", report_json(c.a)}, {"b", report_json(c.b)}, {"speedup", c.speedup}}, 2);
  }
};

class CsvWriter final : public ReportWriter {
 public:
  std::string row(const ReportRow& r) const override { return report_csv_header() + "\n" + report_csv_row(r) + "\n"; }

  std::string table(std::span<const ReportRow> rows) const override {
    // Shortest-exact number formatting is a fifth of a sweep's time: spread it over the cores as well.
    std::vector<std::string> lines(rows.size());
    detail::parallel_chunks(rows.size(), 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i != end; ++i) lines[i] = report_csv_row(rows[i]);
    });
    std::string csv = report_csv_header() + "\n";
    size_t size = csv.size();
    for (const std::string& l : lines) size += l.size() + 1;
    csv.reserve(size);
    for (const std::string& l : lines) (csv += l) += '\n';
    return csv;
  }

  // The rows' layout with a leading side column and a trailing speedup column.
  std::string comparison(const Comparison& c) const override {
    return fmt::format("side,{},speedup\nA,{},{}\nB,{},{}\n", report_csv_header(), report_csv_row(c.a), c.speedup,
                       report_csv_row(c.b), c.speedup);
  }
};

}  // namespace

ReportRow report_row(const Evaluation& e, const WorkloadContext& ctx) {
  return {ctx.gpu.name,         e.source, ctx.batch.size(), context_label(ctx.batch.kv_lens), ctx.clusters,
          e.prediction->metrics};
}

double speedup(const Metrics& a, const Metrics& b) { return b.kernel_us > 0 ? a.kernel_us / b.kernel_us : 0.0; }

Comparison Comparison::of(ReportRow a, ReportRow b) {
  const double s = sim::speedup(a.metrics, b.metrics);
  return {std::move(a), std::move(b), s};
}

std::unique_ptr<ReportWriter> make_report_writer(std::string_view format) {
  if (format == "text") return std::make_unique<TextWriter>();
  if (format == "json") return std::make_unique<JsonWriter>();
  if (format == "csv") return std::make_unique<CsvWriter>();
  throw InputError("format", "must be text, json or csv, got '" + std::string(format) + "'");
}

std::string report_csv_header() {
  std::string h;
  for (const char* c : kConfigColumns) h += std::string(c) + ",";
  return h + metrics_csv_header();
}

std::string report_csv_row(const ReportRow& r) {
  return fmt::format("{},{},{},{},{},{}", csv_cell(r.gpu), r.batch, r.context, r.clusters, csv_cell(r.policy),
                     metrics_csv_row(r.metrics));
}

json report_json(const ReportRow& r) {
  json j = json::object();
  j["gpu"] = r.gpu;
  j["policy"] = r.policy;
  j["batch"] = r.batch;
  if (r.context == "ragged")
    j["context"] = r.context;
  else
    j["context"] = std::stoi(r.context);
  j["clusters"] = r.clusters;
  j.update(metrics_to_json(r.metrics));
  return j;
}

}  // namespace mlasim::sim
