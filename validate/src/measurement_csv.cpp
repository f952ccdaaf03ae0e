#include "mlasim/validate/measurement_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "mlasim/model/csv_cell.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/validate/public_measurements.h"

namespace mlasim::validate {
namespace {

// One data line of the file, with its header map, so cells are read by column name.
struct Record {
  const std::vector<std::string>& cells;
  const std::map<std::string, size_t>& column;
  std::string where;  // "<origin> line N"

  const std::string& text(const std::string& name) const { return cells[column.at(name)]; }

  // `name` may be an optional column the file lacks (a time_ratio column without vs_policy): then there is no cell
  // to quote (reading it threw std::out_of_range; found by fuzz/measurement_csv_fuzz).
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    const auto it = column.find(name);
    throw InputError(name, where + ": " + what + (it == column.end() ? "" : ", got '" + cells[it->second] + "'"));
  }

  int integer(const std::string& name, int min_value) const {
    const std::string& t = text(name);
    int v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v < min_value)
      fail(name, "must be an integer >= " + std::to_string(min_value));
    return v;
  }

  std::optional<double> optional_real(const std::string& name) const {
    const std::string& t = text(name);
    if (t.empty()) return std::nullopt;
    double v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v) || v < 0)
      fail(name, "must be empty or a number >= 0");
    return v;
  }

  // A measured time or ratio: a run that took no time measured nothing (errors against it would be infinite).
  std::optional<double> optional_positive(const std::string& name) const {
    const std::string& t = text(name);
    if (t.empty()) return std::nullopt;
    double v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v) || v <= 0)
      fail(name, "must be empty or a number > 0");
    return v;
  }
};

MeasurementRow parse_row(const Record& r) {
  MeasurementRow m;
  m.gpu = r.text("gpu");
  if (m.gpu.empty()) r.fail("gpu", "must name a GPU profile");
  m.kernel = r.text("kernel");
  m.policy = r.text("policy");
  if (m.policy.empty()) r.fail("policy", "must be a policy spec such as aiter-v1:max_split_per_batch=32");
  m.batch = r.integer("batch", 1);
  if (r.text("context") != "ragged") m.context = r.integer("context", 1);
  m.heads = r.integer("heads", 1);
  m.qo_len = r.integer("qo_len", 1);
  try {
    m.q_dtype = parse_dtype(r.text("q_dtype"), "q_dtype");
    m.kv_dtype = parse_dtype(r.text("kv_dtype"), "kv_dtype");
  } catch (const InputError& e) {
    throw InputError(e.field(), r.where + ": " + e.what());
  }
  m.page_size = r.integer("page_size", 1);
  m.clusters = r.integer("clusters", 0);
  m.stage1_us = r.optional_positive("stage1_us");
  m.reduce_us = r.optional_real("reduce_us");  // 0: no reduce ran
  m.kernel_us = r.optional_positive("kernel_us");
  if (r.column.count("time_ratio")) m.time_ratio = r.optional_positive("time_ratio");
  if (r.column.count("vs_policy")) m.vs_policy = r.text("vs_policy");
  if (m.time_ratio.has_value() != !m.vs_policy.empty())
    r.fail("vs_policy", "a time_ratio needs a vs_policy and a vs_policy a time_ratio");
  if (!m.stage1_us && !m.reduce_us && !m.kernel_us && !m.time_ratio)
    r.fail("kernel_us", "a row needs at least one of stage1_us, reduce_us, kernel_us");
  m.kv_bytes = r.optional_real("kv_bytes");
  m.kv_tbps = r.optional_real("kv_tbps");
  m.max_abs_err = r.optional_real("max_abs_err");
  m.driver = r.text("driver");
  m.commit = r.text("commit");
  m.date = r.text("date");
  if (r.column.count("source")) m.source = r.text("source");
  if (r.column.count("campaign")) m.campaign = r.text("campaign");
  if (r.column.count("config_id")) m.config_id = r.text("config_id");
  if (r.column.count("device")) m.device = r.text("device");
  if (r.column.count("sm_clock_mhz") && !r.text("sm_clock_mhz").empty()) m.sm_clock_mhz = r.integer("sm_clock_mhz", 0);
  if (r.column.count("mem_clock_mhz") && !r.text("mem_clock_mhz").empty())
    m.mem_clock_mhz = r.integer("mem_clock_mhz", 0);
  if (r.column.count("topk") && !r.text("topk").empty()) m.topk = r.integer("topk", 0);
  if (r.column.count("kv_lens") && !r.text("kv_lens").empty()) {
    std::string list = r.text("kv_lens");
    std::replace(list.begin(), list.end(), ';', ',');
    try {
      m.kv_lens = parse_int_list(list, "kv_lens");
    } catch (const InputError&) {
      r.fail("kv_lens", "must be ';'-separated KV lengths >= 1");
    }
    if (static_cast<int>(m.kv_lens.size()) != m.batch)
      r.fail("kv_lens", "must list one length per request (" + std::to_string(m.batch) + ")");
  }
  return m;
}

std::string number_cell(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

}  // namespace

const std::vector<std::string>& measurement_csv_columns() {
  static const std::vector<std::string> columns{
      "gpu",         "kernel",    "policy",   "batch",        "context",       "heads",     "qo_len",     "q_dtype",
      "kv_dtype",    "page_size", "clusters", "stage1_us",    "reduce_us",     "kernel_us", "kv_bytes",   "kv_tbps",
      "max_abs_err", "driver",    "commit",   "date",         "source",        "vs_policy", "time_ratio", "campaign",
      "config_id",   "kv_lens",   "device",   "sm_clock_mhz", "mem_clock_mhz", "topk"};
  return columns;
}

// Columns a file may leave out (older files, public imports).
static bool optional_column(const std::string& name) {
  static const std::set<std::string> optional{"source",  "vs_policy", "time_ratio",   "campaign",      "config_id",
                                              "kv_lens", "device",    "sm_clock_mhz", "mem_clock_mhz", "topk"};
  return optional.count(name) > 0;
}

MeasurementRow measurement_row_of(const sim::Workload& w, const std::string& policy) {
  const DecodeBatch batch = w.make_batch();
  MeasurementRow r;
  r.gpu = w.gpu;
  r.policy = policy;
  r.batch = batch.size();
  if (sim::context_label(batch.kv_lens) == "ragged")
    r.kv_lens = batch.kv_lens;
  else
    r.context = batch.kv_lens.front();
  r.qo_len = batch.uniform_qo_len();
  if (r.qo_len < 1) throw InputError("qo_lens", "a measurement row needs one query length for every request");
  r.heads = w.heads;
  r.q_dtype = w.q_dtype;
  r.kv_dtype = w.kv_dtype;
  r.page_size = w.page_size;
  r.clusters = w.clusters;
  if (!w.topk_lens.empty())
    throw InputError("topk_lens", "a measurement row holds one top-k for every request, not per-request lengths");
  if (w.scopes.on())
    throw InputError("dsv4", "a measurement row holds a dense or top-k workload, not DeepSeek-V4's two scopes");
  r.topk = w.topk;
  return r;
}

std::vector<int> MeasurementRow::lengths() const {
  if (!kv_lens.empty()) return kv_lens;
  return std::vector<int>(static_cast<size_t>(batch), context.value_or(0));
}

void for_each_csv_record(
    std::istream& in, const std::string& origin, size_t header_size,
    const std::function<void(const std::vector<std::string>&, const std::string&, int)>& on_record) {
  std::string line;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = origin + " line " + std::to_string(line_no);
    const std::vector<std::string> cells = split_csv_record(line, where);
    if (cells.size() != header_size)
      throw InputError("csv", where + ": has " + std::to_string(cells.size()) + " cells, the header has " +
                                  std::to_string(header_size));
    on_record(cells, where, line_no);
  }
}

std::vector<std::string> split_csv_record(std::string_view record, const std::string& where) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < record.size(); ++i) {
    const char c = record[i];
    if (quoted) {
      if (c != '"') {
        cells.back() += c;
      } else if (i + 1 < record.size() && record[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  if (quoted) throw InputError("csv", where + ": a quoted cell is not closed");
  return cells;
}

std::vector<MeasurementRow> parse_measurement_csv(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) throw InputError("csv", origin + " is empty (needs a header line)");
  const std::vector<std::string> header = split_csv_record(line, origin + " line 1");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  if (is_public_measurements_header(header)) return import_public_measurements(text, origin).rows;

  for (const std::string& name : measurement_csv_columns())
    if (!optional_column(name) && !column.count(name))
      throw InputError("csv", origin + " line 1: missing column '" + name + "' (needs " +
                                  fmt::format("{}", fmt::join(measurement_csv_columns(), ", ")) + ")");
  std::vector<MeasurementRow> rows;
  for_each_csv_record(in, origin, header.size(), [&](const auto& cells, const std::string& where, int line_no) {
    MeasurementRow row = parse_row(Record{cells, column, where});
    row.line = line_no;
    rows.push_back(std::move(row));
  });
  return rows;
}

std::vector<MeasurementRow> read_measurement_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("measurements", "cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_measurement_csv(ss.str(), path);
}

std::string measurement_csv_header() { return fmt::format("{}", fmt::join(measurement_csv_columns(), ",")); }

std::string measurement_csv_line(const MeasurementRow& m) {
  const auto optional_int = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); };
  const std::vector<std::string> cells{csv_cell(m.gpu),
                                       csv_cell(m.kernel),
                                       csv_cell(m.policy),
                                       std::to_string(m.batch),
                                       m.context ? std::to_string(*m.context) : "ragged",
                                       std::to_string(m.heads),
                                       std::to_string(m.qo_len),
                                       std::string(dtype_name(m.q_dtype)),
                                       std::string(dtype_name(m.kv_dtype)),
                                       std::to_string(m.page_size),
                                       std::to_string(m.clusters),
                                       number_cell(m.stage1_us),
                                       number_cell(m.reduce_us),
                                       number_cell(m.kernel_us),
                                       number_cell(m.kv_bytes),
                                       number_cell(m.kv_tbps),
                                       number_cell(m.max_abs_err),
                                       csv_cell(m.driver),
                                       csv_cell(m.commit),
                                       csv_cell(m.date),
                                       csv_cell(m.source),
                                       csv_cell(m.vs_policy),
                                       number_cell(m.time_ratio),
                                       csv_cell(m.campaign),
                                       csv_cell(m.config_id),
                                       fmt::format("{}", fmt::join(m.kv_lens, ";")),
                                       csv_cell(m.device),
                                       optional_int(m.sm_clock_mhz),
                                       optional_int(m.mem_clock_mhz),
                                       m.topk > 0 ? std::to_string(m.topk) : std::string()};
  return fmt::format("{}", fmt::join(cells, ","));
}

std::string format_measurement_csv(const std::vector<MeasurementRow>& rows) {
  std::string out = measurement_csv_header() + "\n";
  for (const MeasurementRow& m : rows) (out += measurement_csv_line(m)) += '\n';
  return out;
}

}  // namespace mlasim::validate
