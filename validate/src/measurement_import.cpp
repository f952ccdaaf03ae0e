#include "mlasim/validate/measurement_import.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

#include "mlasim/model/input_error.h"
#include "mlasim/model/median.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::validate {
namespace {

constexpr std::string_view kSummaryMarker = "mla_persistent summary (markdown):";
constexpr double kNotRunUs = 1e11;  // the op test leaves 1e12 for a configuration it did not run

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// "| a | b |" -> {"a", "b"}
std::vector<std::string> markdown_cells(std::string_view line) {
  std::string t = trim(line);
  if (t.size() >= 1 && t.front() == '|') t.erase(0, 1);
  if (!t.empty() && t.back() == '|') t.pop_back();
  std::vector<std::string> cells;
  std::string cell;
  for (char c : t) {
    if (c == '|') {
      cells.push_back(trim(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(trim(cell));
  return cells;
}

bool is_markdown_rule(const std::vector<std::string>& cells) {
  return std::all_of(cells.begin(), cells.end(),
                     [](const std::string& c) { return !c.empty() && c.find_first_not_of(":-") == std::string::npos; });
}

bool has_cell(const std::vector<std::string>& cells, std::string_view name) {
  return std::find(cells.begin(), cells.end(), name) != cells.end();
}

// The kernel-time column, "decode:asm_576" or with its unit, "decode:asm_576 (µs)".
std::string column_key(const std::string& name) {
  return name.rfind("decode:asm_576", 0) == 0 ? "decode:asm_576" : name;
}

bool is_op_test_header(const std::vector<std::string>& cells) {
  return has_cell(cells, "ctx_lens") && std::any_of(cells.begin(), cells.end(), [](const std::string& c) {
           return column_key(c) == "decode:asm_576";
         });
}

// One table cell being read: where it is, for the error line.
struct Cell {
  const std::string& text;
  const std::string& column;
  std::string where;  // "<origin> line N, column C (<column>)"

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(column, where + ": " + what + ", got '" + text + "'");
  }
  long long integer(long long lo) const {
    long long v = 0;
    const std::string t = trim(text);
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v < lo)
      fail("must be an integer >= " + std::to_string(lo));
    return v;
  }
  double number() const {
    double v = 0;
    const std::string t = trim(text);
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v) || v <= 0)
      fail("must be a number > 0");
    return v;
  }
  bool boolean() const {
    const std::string t = trim(text);
    if (t == "True" || t == "true" || t == "1") return true;
    if (t == "False" || t == "false" || t == "0") return false;
    fail("must be True or False");
  }
  // torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.bfloat16 (or fp8, bf16).
  DType dtype() const {
    std::string t = trim(text);
    if (t.rfind("torch.", 0) == 0) t.erase(0, 6);
    if (t.rfind("float8_e4m3", 0) == 0 || t == "fp8") return DType::fp8;
    if (t == "bfloat16" || t == "bf16") return DType::bf16;
    fail("must be a torch dtype (torch.float8_e4m3fn, torch.float8_e4m3fnuz or torch.bfloat16)");
  }
};

// One table: its header and rows, each with the file line it came from.
struct Table {
  int header_line = 0;
  std::vector<std::string> header;
  std::vector<std::pair<int, std::vector<std::string>>> rows;
};

std::vector<Table> markdown_tables(const std::vector<std::string>& lines) {
  std::vector<Table> tables;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).rfind('|', 0) != 0) continue;
    const std::vector<std::string> header = markdown_cells(lines[i]);
    if (!is_op_test_header(header)) continue;
    Table t;
    t.header_line = static_cast<int>(i) + 1;
    t.header = header;
    size_t j = i + 1;
    if (j < lines.size() && is_markdown_rule(markdown_cells(lines[j]))) ++j;
    for (; j < lines.size() && trim(lines[j]).rfind('|', 0) == 0; ++j)
      t.rows.emplace_back(static_cast<int>(j) + 1, markdown_cells(lines[j]));
    tables.push_back(std::move(t));
    i = j - 1;
  }
  return tables;
}

std::vector<Table> csv_tables(const std::vector<std::string>& lines, const std::string& origin) {
  std::vector<Table> tables;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("ctx_lens") == std::string::npos) continue;
    const std::string where = origin + " line " + std::to_string(i + 1);
    const std::vector<std::string> header = split_csv_record(lines[i], where);
    if (!is_op_test_header(header)) continue;
    Table t;
    t.header_line = static_cast<int>(i) + 1;
    t.header = header;
    size_t j = i + 1;
    for (; j < lines.size() && !trim(lines[j]).empty(); ++j) {
      const std::vector<std::string> cells = split_csv_record(lines[j], origin + " line " + std::to_string(j + 1));
      if (is_op_test_header(cells)) break;
      t.rows.emplace_back(static_cast<int>(j) + 1, cells);
    }
    tables.push_back(std::move(t));
    i = j - 1;
  }
  return tables;
}

void import_table(const Table& t, const std::string& origin, const ImportContext& ctx, MeasurementImport& out) {
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < t.header.size(); ++i)
    if (!t.header[i].empty()) column.emplace(column_key(t.header[i]), i);
  for (const char* name : {"ctx_lens", "batch_size", "nhead", "dtype", "kvtype", "page_size", "varlen", "decode_qlen",
                           "max_split_per_batch", "decode:asm_576"})
    if (!column.count(name))
      throw InputError("aiter-log",
                       fmt::format("{} line {}: the op-test table has no column '{}'", origin, t.header_line, name));
  for (const auto& [line_no, cells] : t.rows) {
    const std::string line_where = fmt::format("{} line {}", origin, line_no);
    if (cells.size() != t.header.size())
      throw InputError("aiter-log",
                       fmt::format("{}: {} cells for {} columns", line_where, cells.size(), t.header.size()));
    // The row's cells by an init-capture: clang before 16 cannot capture a structured binding (the fuzz build).
    const auto cell = [&, &row_cells = cells](const std::string& name) {
      const size_t i = column.at(name);
      return Cell{row_cells[i], t.header[i], fmt::format("{}, column {} ({})", line_where, i + 1, t.header[i])};
    };
    MeasurementRow row;
    row.gpu = ctx.gpu;
    row.line = line_no;
    const int context = static_cast<int>(cell("ctx_lens").integer(1));
    row.batch = static_cast<int>(cell("batch_size").integer(1));
    row.heads = static_cast<int>(cell("nhead").integer(1));
    row.q_dtype = cell("dtype").dtype();
    row.kv_dtype = cell("kvtype").dtype();
    row.page_size = static_cast<int>(cell("page_size").integer(1));
    row.qo_len = static_cast<int>(cell("decode_qlen").integer(1));
    const bool varlen = cell("varlen").boolean();
    int max_split = static_cast<int>(cell("max_split_per_batch").integer(1));
    const bool non_persistent = column.count("non_persistent_mode") && cell("non_persistent_mode").boolean();
    const double us = cell("decode:asm_576").number();
    std::string layout = column.count("paged_layout") ? trim(cells[column.at("paged_layout")]) : "";
    row.kernel = "aiter asm_576" + (layout.empty() || layout == "None" ? "" : " " + layout);
    row.source = line_where + ": AITER op_tests/test_mla_persistent.py summary";
    if (varlen) {
      out.notes.push_back(fmt::format(
          "{}: varlen row (batch {}, ctx_lens {}) left out of prediction: the op test draws each request's KV "
          "length with random.uniform(5, ctx_lens), unseeded, and the log does not record them",
          line_where, row.batch, context));
      continue;
    }
    if (us >= kNotRunUs) {
      out.notes.push_back(fmt::format("{}: left out: decode:asm_576 is {} (the op test did not run this kernel)",
                                      line_where, cells[column.at("decode:asm_576")]));
      continue;
    }
    row.context = context;
    row.kernel_us = us;
    if (non_persistent) {
      row.policy = "aiter-nonpersistent";
    } else {
      // The op test lowers max_split_per_batch to ceil(CUs / batch) for 128 heads and more after logging it.
      if (row.heads >= 128 && ctx.num_cu > 0) {
        const int cap = (ctx.num_cu + row.batch - 1) / row.batch;
        if (cap < max_split) {
          row.source += fmt::format(" (max_split_per_batch {} capped at ceil({} CUs / batch) as the test does)",
                                    max_split, ctx.num_cu);
          max_split = cap;
        }
      }
      row.policy = fmt::format("aiter-v1:max_split_per_batch={}", max_split);
    }
    out.rows.push_back(std::move(row));
  }
}

// The kernel's own name: "void ns::mla_x_ps<T>(args)" -> "mla_x_ps"; "_ZN5aiter9mla_x_psE..." -> "mla_x_ps".
std::string base_kernel_name(std::string_view name) {
  std::string n = trim(name);
  if (n.rfind("_Z", 0) == 0) {
    size_t i = 2;
    if (i < n.size() && n[i] == 'N') ++i;
    std::string last;
    while (i < n.size() && std::isdigit(static_cast<unsigned char>(n[i]))) {
      size_t len = 0;
      while (i < n.size() && std::isdigit(static_cast<unsigned char>(n[i]))) len = len * 10 + (n[i++] - '0');
      if (i + len > n.size()) break;
      last = n.substr(i, len);
      i += len;
    }
    return last.empty() ? n : last;
  }
  if (const size_t paren = n.find('('); paren != std::string::npos) n.resize(paren);
  if (const size_t angle = n.find('<'); angle != std::string::npos) n.resize(angle);
  if (const size_t space = n.rfind(' '); space != std::string::npos) n.erase(0, space + 1);
  if (const size_t colons = n.rfind("::"); colons != std::string::npos) n.erase(0, colons + 2);
  return n;
}

// Glob match with '*' only.
bool glob(std::string_view pattern, std::string_view s) {
  if (pattern.empty()) return s.empty();
  if (pattern.front() == '*') {
    for (size_t i = 0; i <= s.size(); ++i)
      if (glob(pattern.substr(1), s.substr(i))) return true;
    return false;
  }
  return !s.empty() && s.front() == pattern.front() && glob(pattern.substr(1), s.substr(1));
}

}  // namespace

MeasurementFormat parse_measurement_format(std::string_view text, const std::string& field) {
  if (text == "auto") return MeasurementFormat::automatic;
  if (text == "csv") return MeasurementFormat::csv;
  if (text == "aiter-log") return MeasurementFormat::aiter_log;
  if (text == "rocprof") return MeasurementFormat::rocprof;
  throw InputError(field, "must be auto, csv, aiter-log or rocprof, got '" + std::string(text) + "'");
}

std::string_view measurement_format_name(MeasurementFormat f) {
  switch (f) {
    case MeasurementFormat::automatic: return "auto";
    case MeasurementFormat::csv: return "csv";
    case MeasurementFormat::aiter_log: return "aiter-log";
    case MeasurementFormat::rocprof: return "rocprof";
  }
  return "auto";
}

MeasurementFormat detect_measurement_format(std::string_view text) {
  if (text.find(kSummaryMarker) != std::string_view::npos) return MeasurementFormat::aiter_log;
  const std::vector<std::string> lines = lines_of(text);
  for (const std::string& line : lines) {
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '|' && is_op_test_header(markdown_cells(t))) return MeasurementFormat::aiter_log;
  }
  if (lines.empty()) return MeasurementFormat::csv;
  std::vector<std::string> header;
  try {
    header = split_csv_record(lines.front(), "header");
  } catch (const InputError&) {
    return MeasurementFormat::csv;
  }
  if (is_op_test_header(header)) return MeasurementFormat::aiter_log;
  if (has_cell(header, "Kernel_Name") && has_cell(header, "Start_Timestamp") && has_cell(header, "End_Timestamp"))
    return MeasurementFormat::rocprof;
  return MeasurementFormat::csv;
}

MeasurementImport import_aiter_log(std::string_view text, const std::string& origin, const ImportContext& ctx) {
  const std::vector<std::string> lines = lines_of(text);
  std::vector<Table> tables = markdown_tables(lines);
  if (tables.empty()) tables = csv_tables(lines, origin);
  if (tables.empty())
    throw InputError("aiter-log", origin + ": no op-test summary table (a '" + std::string(kSummaryMarker) +
                                      "' markdown table or CSV with columns ctx_lens ... decode:asm_576)");
  MeasurementImport out;
  for (const Table& t : tables) import_table(t, origin, ctx, out);
  return out;
}

bool is_mla_stage1_kernel(std::string_view name) {
  const std::string n = base_kernel_name(name);
  return glob("mla_*_ps", n) || glob("mla_dec_stage1*", n) || glob("*mla*decode*", n);
}

bool is_mla_reduce_kernel(std::string_view name) {
  const std::string n = base_kernel_name(name);
  return glob("kn_mla_reduce_v1*", n) || glob("_fwd_kernel_stage2*", n);
}

MeasurementImport import_rocprof_trace(std::string_view text, const std::string& origin, const ImportContext& ctx) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) throw InputError("rocprof", origin + " is empty (needs the kernel trace header)");
  const std::vector<std::string> header = split_csv_record(line, origin + " line 1");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column.emplace(header[i], i);
  for (const char* name : {"Kernel_Name", "Start_Timestamp", "End_Timestamp"})
    if (!column.count(name))
      throw InputError("rocprof", origin + " line 1: missing column '" + name +
                                      "' (a rocprofv3 kernel trace: Kernel_Name, Start_Timestamp, End_Timestamp)");
  struct Launch {
    std::string name;
    long long start = 0, end = 0;
    int line = 0;
    bool stage1 = false;
  };
  std::vector<Launch> launches;
  for_each_csv_record(in, origin, header.size(), [&](const auto& cells, const std::string& where, int line_no) {
    const std::string& name = cells[column.at("Kernel_Name")];
    const bool stage1 = is_mla_stage1_kernel(name);
    if (!stage1 && !is_mla_reduce_kernel(name)) return;
    const auto cell = [&](const std::string& col) {
      const size_t i = column.at(col);
      return Cell{cells[i], header[i], fmt::format("{}, column {} ({})", where, i + 1, col)};
    };
    Launch l{name, cell("Start_Timestamp").integer(0), 0, line_no, stage1};
    const Cell end = cell("End_Timestamp");
    l.end = end.integer(0);
    if (l.end < l.start) end.fail("must not be before Start_Timestamp (" + std::to_string(l.start) + ")");
    launches.push_back(std::move(l));
  });
  std::stable_sort(launches.begin(), launches.end(),
                   [](const Launch& a, const Launch& b) { return a.start < b.start; });

  // Each stage-1 launch with the reduce that follows it before the next stage-1 launch (or none).
  struct Group {
    int first_line = 0;
    std::string reduce;
    std::vector<double> stage1, reduce_us, kernel;
  };
  std::map<std::string, Group> groups;  // by stage-1 kernel name, then reduce name
  std::vector<std::string> order;
  MeasurementImport out;
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& s = launches[i];
    if (!s.stage1) {
      out.notes.push_back(fmt::format("{} line {}: reduce {} follows no stage-1 launch; ignored", origin, s.line,
                                      base_kernel_name(s.name)));
      continue;
    }
    const Launch* r = i + 1 < launches.size() && !launches[i + 1].stage1 ? &launches[i + 1] : nullptr;
    const std::string key = base_kernel_name(s.name) + "|" + (r ? base_kernel_name(r->name) : "");
    auto [it, fresh] = groups.try_emplace(key);
    Group& g = it->second;
    if (fresh) {
      g.first_line = s.line;
      g.reduce = r ? base_kernel_name(r->name) : "";
      order.push_back(key);
    }
    g.stage1.push_back(static_cast<double>(s.end - s.start) / 1000.0);
    if (r) {
      g.reduce_us.push_back(static_cast<double>(r->end - r->start) / 1000.0);
      g.kernel.push_back(static_cast<double>(r->end - s.start) / 1000.0);
      ++i;
    } else {
      g.kernel.push_back(static_cast<double>(s.end - s.start) / 1000.0);
    }
  }
  if (order.empty())
    throw InputError("rocprof", origin +
                                    ": no MLA stage-1 kernel (Kernel_Name matching mla_*_ps, mla_dec_stage1* or "
                                    "*mla*decode*)");
  for (const std::string& key : order) {
    const Group& g = groups.at(key);
    MeasurementRow row = ctx.workload;
    row.gpu = ctx.gpu;
    row.kernel = key.substr(0, key.find('|'));
    row.line = g.first_line;
    row.stage1_us = median(g.stage1);
    if (!g.reduce_us.empty()) row.reduce_us = median(g.reduce_us);
    row.kernel_us = median(g.kernel);
    row.source = fmt::format("{} line {}: rocprofv3 kernel trace, median of {} launches of {}{}", origin, g.first_line,
                             g.stage1.size(), row.kernel, g.reduce.empty() ? "" : " + " + g.reduce);
    out.rows.push_back(std::move(row));
  }
  return out;
}

MeasurementImport import_measurements(std::string_view text, const std::string& origin, MeasurementFormat format,
                                      const ImportContext& ctx) {
  if (format == MeasurementFormat::automatic) format = detect_measurement_format(text);
  switch (format) {
    case MeasurementFormat::aiter_log: return import_aiter_log(text, origin, ctx);
    case MeasurementFormat::rocprof: return import_rocprof_trace(text, origin, ctx);
    default: return {parse_measurement_csv(text, origin), {}};
  }
}

MeasurementImport import_measurement_file(const std::string& path, MeasurementFormat format, const ImportContext& ctx) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("measurements", "cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return import_measurements(ss.str(), path, format, ctx);
}

}  // namespace mlasim::validate
