#include "mlasim/sim/metrics_format.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/metric_fields.h"

namespace mlasim::sim {
namespace {

using nlohmann::json;

double parse_double(const std::string& field, const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(field, "must be a number, got '" + text + "'");
  return v;
}

int parse_int(const std::string& field, const std::string& text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(field, "must be an integer, got '" + text + "'");
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    const size_t at = text.find(sep, begin);
    out.push_back(text.substr(begin, at == std::string::npos ? std::string::npos : at - begin));
    if (at == std::string::npos) return out;
    begin = at + 1;
  }
}

std::string strip_line_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

const std::vector<std::string>& metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const MetricField& f : metric_fields()) n.emplace_back(f.name);
    return n;
  }();
  return names;
}

std::string metrics_text(const Metrics& m) {
  std::string out;
  for (const MetricField& f : metric_fields()) out += fmt::format("{:<20}{}\n", f.name, f.text(m));
  return out;
}

json metrics_to_json(const Metrics& m) {
  json j = json::object();
  for (const MetricField& f : metric_fields()) {
    const std::string key(f.name);
    if (f.kind == MetricField::Kind::real)
      j[key] = m.*f.real;
    else if (f.kind == MetricField::Kind::integer)
      j[key] = m.*f.integer;
    else
      j[key] = m.splits_per_request;
  }
  return j;
}

Metrics metrics_from_json(const json& j) {
  if (!j.is_object()) throw InputError("metrics", "must be a JSON object");
  Metrics m;
  for (const MetricField& f : metric_fields()) {
    const std::string key(f.name);
    if (!j.contains(key)) throw InputError(key, "missing in the metrics object");
    const json& v = j.at(key);
    if (f.kind == MetricField::Kind::list) {
      if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number_integer(); }))
        throw InputError(key, "must be a list of integers");
      m.splits_per_request = v.get<std::vector<int>>();
    } else if (!v.is_number() || (f.integer && !v.is_number_integer())) {
      throw InputError(key, f.integer ? "must be an integer" : "must be a number");
    } else if (f.real) {
      m.*f.real = v.get<double>();
    } else {
      m.*f.integer = v.get<int>();
    }
  }
  return m;
}

std::string metrics_csv_header() { return fmt::format("{}", fmt::join(metric_names(), ",")); }

std::vector<std::string> metrics_csv_cells(const Metrics& m) {
  std::vector<std::string> cells;
  cells.reserve(metric_fields().size());
  for (const MetricField& f : metric_fields()) cells.push_back(f.cell(m));
  return cells;
}

std::string metrics_csv_row(const Metrics& m) { return fmt::format("{}", fmt::join(metrics_csv_cells(m), ",")); }

Metrics metrics_from_csv(const std::string& header, const std::string& row) {
  const std::vector<std::string> names = split(strip_line_end(header), ',');
  const std::vector<std::string> cells = split(strip_line_end(row), ',');
  if (names.size() != cells.size())
    throw InputError("csv", fmt::format("the row has {} cells but the header {} columns", cells.size(), names.size()));
  Metrics m;
  for (const MetricField& f : metric_fields()) {
    const std::string key(f.name);
    const auto at = std::find(names.begin(), names.end(), key);
    if (at == names.end()) throw InputError(key, "missing column in the CSV header");
    const std::string& cell = cells[static_cast<size_t>(at - names.begin())];
    if (f.real)
      m.*f.real = parse_double(key, cell);
    else if (f.integer)
      m.*f.integer = parse_int(key, cell);
    else if (!cell.empty())
      for (const std::string& s : split(cell, ';')) m.splits_per_request.push_back(parse_int(key, s));
  }
  return m;
}

json timeline_to_json(const Timeline& t) {
  json rows = json::array();
  for (const auto& row : t.rows) {
    json boxes = json::array();
    for (const TimelineBox& b : row)
      boxes.push_back({{"begin_us", b.begin_us},
                       {"stream_us", b.stream_us},
                       {"end_us", b.end_us},
                       {"work", b.work},
                       {"request", b.request},
                       {"kv_start", b.kv_start},
                       {"kv_end", b.kv_end},
                       {"partial", b.partial}});
    rows.push_back(std::move(boxes));
  }
  json reduce = json::array();
  for (const ReduceBox& b : t.reduce) {
    reduce.push_back({{"begin_us", b.begin_us},
                      {"end_us", b.end_us},
                      {"tile", b.tile},
                      {"request", b.request},
                      {"partials", b.partials},
                      {"head", b.head},
                      {"heads", b.heads},
                      {"row_group", b.row_group},
                      {"block", b.block},
                      {"cu", b.cu},
                      {"massive", b.massive}});
    if (b.scope_merge) reduce.back()["scope_merge"] = true;  // only merged two-scope runs have these
  }
  return {{"num_clusters", t.num_clusters}, {"rows_per_cu", t.rows_per_cu}, {"stage1_us", t.stage1_us},
          {"reduce_us", t.reduce_us},       {"rows", std::move(rows)},      {"reduce", std::move(reduce)}};
}

json prediction_to_json(const Prediction& p) {
  // The kernel class costed and the memory traffic by direction sit beside the metric fields (they are not
  // columns of the CSV forms).
  return {{"metrics", metrics_to_json(p.metrics)}, {"kernel_class", p.metrics.kernel_class},
          {"read_bytes", p.metrics.read_bytes},    {"stage1_read_bytes", p.metrics.stage1_read_bytes},
          {"write_bytes", p.metrics.write_bytes},  {"timeline", timeline_to_json(p.timeline)}};
}

}  // namespace mlasim::sim
