#include "mlasim/validate/public_measurements.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::validate {
namespace {

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> columns{"gpu",           "kernel",  "q_dtype",  "kv_dtype", "batch",
                                                "context",       "q_heads", "kv_heads", "qseqlen",  "page_size",
                                                "split_setting", "metric",  "value",    "unit",     "source"};
  return columns;
}

std::optional<int> whole_number(const std::string& text) {
  int v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < 1) return std::nullopt;
  return v;
}

// The number at the start of a cell: "13.8" and "13.8 us (derived ...)" both give 13.8.
std::optional<double> leading_number(const std::string& text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p == text.data() || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// "fp8 (inferred)" and "fp8?" -> "fp8"; "-" -> "".
std::string first_word(const std::string& text) {
  std::string w;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      break;
    }
  }
  return w;
}

// The stage a time metric measures, or "" when the metric is not a kernel time.
std::string stage_of_metric(const std::string& metric) {
  if (metric == "kernel_time") return "kernel_us";
  if (metric == "reduce_kernel_time" || metric == "reduce_kernel_time_graph" || metric == "reduce_kernel_avg_time")
    return "reduce_us";
  if (metric.starts_with("time_ratio")) return "time_ratio";
  return "";
}

// "-ms 32" or "max_split_per_batch=16": the split budget a persistent run was made with.
std::optional<std::string> policy_from_split_setting(const std::string& setting) {
  for (const std::string key : {"-ms", "max_split_per_batch"}) {
    const size_t at = setting.find(key);
    if (at == std::string::npos) continue;
    size_t i = at + key.size();
    while (i < setting.size() && (setting[i] == ' ' || (key != "-ms" && setting[i] == '='))) ++i;
    int v = 0;
    const auto [p, ec] = std::from_chars(setting.data() + i, setting.data() + setting.size(), v);
    if (ec == std::errc() && p != setting.data() + i) return "aiter-v1:max_split_per_batch=" + std::to_string(v);
  }
  return std::nullopt;
}

std::map<std::string, std::string> parse_assumptions(const std::string& text, const std::string& where) {
  static const std::vector<std::string> keys{"policy",  "vs_policy", "context", "page_size",
                                             "q_dtype", "kv_dtype",  "clusters"};
  std::map<std::string, std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    item = trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = eq == std::string::npos ? item : trim(item.substr(0, eq));
    if (eq == std::string::npos || std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError("assumptions", where + ": '" + item +
                                          "' must be key=value with key policy, vs_policy, context, page_size, "
                                          "q_dtype, kv_dtype or clusters");
    out[key] = trim(item.substr(eq + 1));
  }
  return out;
}

}  // namespace

bool is_public_measurements_header(const std::vector<std::string>& header) {
  for (const char* name : {"metric", "value", "unit", "split_setting"})
    if (std::find(header.begin(), header.end(), name) == header.end()) return false;
  return true;
}

std::string profile_name_for_label(const std::string& label) {
  const std::string word = first_word(label);
  const std::vector<std::string> names = builtin_gpu_names();
  for (const std::string& candidate : {word, word + "x"})
    if (std::find(names.begin(), names.end(), candidate) != names.end()) return candidate;
  return word;
}

PublicImport import_public_measurements(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line)) throw InputError("csv", origin + " is empty (needs a header line)");
  const std::vector<std::string> header = split_csv_record(line, origin + " line 1");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const std::string& name : required_columns())
    if (!column.count(name)) throw InputError("csv", origin + " line 1: missing column '" + name + "'");

  PublicImport result;
  for_each_csv_record(in, origin, header.size(), [&](const auto& cells, const std::string& where, int line_no) {
    auto cell = [&](const std::string& name) { return trim(cells[column.at(name)]); };
    auto skip = [&](const std::string& reason) { result.skipped.push_back(where + ": " + reason); };
    std::map<std::string, std::string> assumed;
    if (column.count("assumptions")) assumed = parse_assumptions(cell("assumptions"), where);
    auto value_of = [&](const std::string& key, const std::string& published) {
      auto it = assumed.find(key);
      return it != assumed.end() ? it->second : published;
    };

    const std::string stage = stage_of_metric(cell("metric"));
    if (stage.empty()) {
      skip("metric '" + cell("metric") + "' is not a kernel time or time ratio");
      return;
    }
    const std::optional<double> value = leading_number(cell("value"));
    const bool ratio = stage == "time_ratio";
    if (!value || !cell("unit").starts_with(ratio ? "x" : "us")) {
      skip("value '" + cell("value") + "' with unit '" + cell("unit") + "' is not " +
           (ratio ? "a ratio in x" : "a time in us"));
      return;
    }
    if (ratio && !assumed.count("vs_policy")) {
      skip("a time ratio needs the denominator's policy as an assumption (vs_policy=...)");
      return;
    }
    MeasurementRow m;
    m.gpu = profile_name_for_label(cell("gpu"));
    m.kernel = cell("kernel");
    m.source = cell("source");
    m.line = line_no;
    const std::optional<int> batch = whole_number(cell("batch"));
    const std::optional<int> context = whole_number(value_of("context", cell("context")));
    const std::optional<int> heads = whole_number(cell("q_heads"));
    const std::optional<int> qlen = whole_number(cell("qseqlen"));
    const std::optional<int> page = whole_number(value_of("page_size", cell("page_size")));
    if (!batch || !context || !heads || !qlen || !page || cell("kv_heads") != "1") {
      skip("batch, context, q_heads, qseqlen, page_size must be whole numbers and kv_heads 1 (got '" + cell("batch") +
           "', '" + cell("context") + "', '" + cell("q_heads") + "', '" + cell("qseqlen") + "', '" + cell("page_size") +
           "', '" + cell("kv_heads") + "'); an assumptions cell can supply context and page_size");
      return;
    }
    m.batch = *batch;
    m.context = *context;
    m.heads = *heads;
    m.qo_len = *qlen;
    m.page_size = *page;
    try {
      m.q_dtype = parse_dtype(first_word(value_of("q_dtype", cell("q_dtype"))), "q_dtype");
      m.kv_dtype = parse_dtype(first_word(value_of("kv_dtype", cell("kv_dtype"))), "kv_dtype");
    } catch (const InputError& e) {
      skip(std::string(e.what()) + " (an assumptions cell can supply q_dtype and kv_dtype)");
      return;
    }
    if (assumed.count("clusters")) {
      const std::optional<int> clusters = whole_number(assumed["clusters"]);
      if (!clusters) throw InputError("assumptions", where + ": clusters must be a whole number >= 1");
      m.clusters = *clusters;
    }
    if (assumed.count("policy")) {
      m.policy = assumed["policy"];
    } else if (auto derived = policy_from_split_setting(cell("split_setting"))) {
      m.policy = *derived;
    } else {
      skip("split_setting '" + cell("split_setting") + "' names no policy; an assumptions cell can supply one");
      return;
    }
    if (ratio) {
      m.time_ratio = *value;
      m.vs_policy = assumed["vs_policy"];
    } else {
      (stage == "kernel_us" ? m.kernel_us : m.reduce_us) = *value;
    }
    result.rows.push_back(std::move(m));
  });
  return result;
}

}  // namespace mlasim::validate
