#include "mlasim/model/gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <utility>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// `v` as T, or InputError naming `field`. nlohmann's get<int>() converts any number (a float beyond int is undefined
// behaviour) and value() throws its own type_error for a value of another type; both were found by
// fuzz/gpu_profile_fuzz. Integers must be JSON integers within T's range.
template <typename T>
T value_as(const json& v, const std::string& field, const std::string& origin) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!v.is_number_integer()) throw InputError(field, "has the wrong type in " + origin);
    // A uint64 beyond int64 reads back negative, so it fails the range check too.
    const int64_t x = v.get<int64_t>();
    if ((v.is_number_unsigned() && x < 0) || !std::in_range<T>(x))
      throw InputError(field, "is out of range (" + v.dump() + ") in " + origin);
    return static_cast<T>(x);
  } else {
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      throw InputError(field, "has the wrong type in " + origin);
    }
  }
}

template <typename T>
T required(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key)) throw InputError(std::string("gpu.") + key, "missing in " + origin);
  return value_as<T>(j.at(key), std::string("gpu.") + key, origin);
}

// The field `key` of `j` (an object), or `fallback` when it is absent; `field` names `j` in errors.
template <typename T>
T optional(const json& j, const char* key, T fallback, const std::string& field, const std::string& origin) {
  return j.contains(key) ? value_as<T>(j.at(key), field + "." + key, origin) : fallback;
}

// A held-out error table of a profile (ratio_error, edit_error): key -> {median, p90, count, source}, the median and
// the p90 numbers >= 0 in `unit`, the median at most the p90, the count an integer >= 1; `keys` limits the keys
// where it is not empty. Each error names its field.
template <typename E>
struct ErrorTable {
  const char* field;              // "gpu.ratio_error"
  const char* key_kind;           // what a key names: "kernel class"
  std::vector<std::string> keys;  // the keys allowed (empty: any)
  const char* unit;               // of the median and the p90
  std::pair<const char*, double E::*> median, p90;
  std::pair<const char*, int E::*> count;
};

template <typename E>
std::map<std::string, E> error_table(const json& table, const ErrorTable<E>& t, const std::string& origin) {
  const std::string form = std::string("{") + t.median.first + ", " + t.p90.first + ", " + t.count.first + ", source}";
  const std::string allowed = t.keys.empty() ? "" : " (" + join_names(t.keys) + ")";
  if (!table.is_object())
    throw InputError(t.field,
                     "must be an object of " + std::string(t.key_kind) + allowed + " -> " + form + " in " + origin);
  std::map<std::string, E> out;
  for (const auto& [k, v] : table.items()) {
    const std::string field = std::string(t.field) + "." + k;
    if (!t.keys.empty() && std::find(t.keys.begin(), t.keys.end(), k) == t.keys.end())
      throw InputError(field, "unknown " + std::string(t.key_kind) + allowed + " in " + origin);
    if (!v.is_object()) throw InputError(field, "must be an object " + form + " in " + origin);
    E e;
    for (const auto& [key, member] : {t.median, t.p90}) {
      // Named as a json: `key` comes from t, so v[key] would be a dependent expression here.
      const json* x = v.contains(key) ? &v.at(key) : nullptr;
      if (!x || !x->is_number() || !(x->get<double>() >= 0))
        throw InputError(field + "." + key, "must be a number >= 0 (" + std::string(t.unit) + ") in " + origin);
      e.*member = x->get<double>();
    }
    if (e.*t.median.second > e.*t.p90.second)
      throw InputError(field + "." + t.median.first, "must be at most " + std::string(t.p90.first) + " in " + origin);
    const std::string count = field + "." + t.count.first;
    if (!v.contains(t.count.first)) throw InputError(count, "missing (an integer >= 1) in " + origin);
    e.*t.count.second = value_as<int>(v[t.count.first], count, origin);
    if (e.*t.count.second < 1) throw InputError(count, "must be an integer >= 1 in " + origin);
    e.source = optional<std::string>(v, "source", "", field, origin);
    out[k] = e;
  }
  return out;
}

}  // namespace

double Gpu::param(const std::string& key, double fallback) const {
  auto it = params.find(key);
  return it == params.end() ? fallback : it->second.value;
}

std::string data_dir() {
  if (const char* env = std::getenv("MLASIM_DATA_DIR"); env && *env) return env;
  return MLASIM_DATA_DIR;
}

std::vector<std::string> builtin_gpu_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir()) / "gpus", ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Gpu parse_gpu_json(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number beyond double (gpu_profile_fuzz)
    throw InputError("gpu", origin + " is not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw InputError("gpu", origin + " must hold a JSON object");
  Gpu g;
  g.name = required<std::string>(j, "name", origin);
  g.display_name = optional<std::string>(j, "display_name", g.name, "gpu", origin);
  g.vendor = required<std::string>(j, "vendor", origin);
  g.arch = required<std::string>(j, "arch", origin);
  g.num_cu = required<int>(j, "num_cu", origin);
  if (g.num_cu <= 0 || g.num_cu > 4096)
    throw InputError("gpu.num_cu", "must be 1..4096, got " + std::to_string(g.num_cu) + " in " + origin);
  g.wave_size = optional<int>(j, "wave_size", g.vendor == "nvidia" ? 32 : 64, "gpu", origin);
  g.hbm_tbps = required<double>(j, "hbm_tbps", origin);
  if (g.hbm_tbps <= 0) throw InputError("gpu.hbm_tbps", "must be > 0 in " + origin);
  g.clock_mhz = optional<double>(j, "clock_mhz", 0.0, "gpu", origin);
  g.lds_per_cu_kib = optional<double>(j, "lds_per_cu_kib", 0.0, "gpu", origin);
  g.l2_mib = optional<double>(j, "l2_mib", 0.0, "gpu", origin);
  if (j.contains("matrix_tflops")) {
    // Given, a peak must be a positive number: 0 would read as "no compute limit" (a profile leaves it out for that).
    const json& m = j["matrix_tflops"];
    if (!m.is_object())
      throw InputError("gpu.matrix_tflops", "must be an object {\"bf16\": T, \"fp8\": T} in " + origin);
    for (const auto& [key, value] : m.items()) {
      if (key != "bf16" && key != "fp8")
        throw InputError("gpu.matrix_tflops." + key, "is not a dtype here; allowed: bf16, fp8 in " + origin);
      if (!value.is_number() || !(value.get<double>() > 0))
        throw InputError("gpu.matrix_tflops." + key,
                         "must be a number > 0 (dense TFLOP/s), got " + value.dump() + " in " + origin);
      (key == "bf16" ? g.bf16_tflops : g.fp8_tflops) = value.get<double>();
    }
  }
  if (j.contains("sources"))
    for (const auto& [k, v] : j["sources"].items()) g.sources[k] = value_as<std::string>(v, "gpu.sources." + k, origin);
  if (j.contains("params")) {
    for (const auto& [k, v] : j["params"].items()) {
      if (!v.is_object() || !v.contains("value") || !v["value"].is_number())
        throw InputError("gpu.params." + k, "must be an object with a numeric 'value' in " + origin);
      const std::string field = "gpu.params." + k;
      g.params[k] = GpuParam{v["value"].get<double>(), optional<std::string>(v, "kind", "assumed", field, origin),
                             optional<std::string>(v, "source", "", field, origin)};
      if (v.contains("std_error") && v["std_error"].is_number()) g.params[k].std_error = v["std_error"].get<double>();
    }
  }
  if (j.contains("model_error")) {
    for (const auto& [k, v] : j["model_error"].items()) {
      if (!v.is_object() || !v.contains("rms_pct") || !v["rms_pct"].is_number())
        throw InputError("gpu.model_error." + k, "must be an object with a numeric 'rms_pct' in " + origin);
      const std::string field = "gpu.model_error." + k;
      g.model_error[k] =
          ModelError{v["rms_pct"].get<double>(), optional<double>(v, "mape_pct", 0.0, field, origin),
                     optional<int>(v, "rows", 0, field, origin), optional<std::string>(v, "source", "", field, origin)};
    }
  }
  if (j.contains("ratio_error"))
    g.ratio_error = error_table(j["ratio_error"],
                                ErrorTable<RatioError>{"gpu.ratio_error",
                                                       "kernel class",
                                                       {},
                                                       "%",
                                                       {"median_pct", &RatioError::median_pct},
                                                       {"p90_pct", &RatioError::p90_pct},
                                                       {"pairs", &RatioError::pairs}},
                                origin);
  if (j.contains("edit_error"))
    g.edit_error = error_table(j["edit_error"],
                               ErrorTable<EditError>{"gpu.edit_error",
                                                     "edit kind",
                                                     {"fuse", "remove"},
                                                     "us",
                                                     {"median_us", &EditError::median_us},
                                                     {"p90_us", &EditError::p90_us},
                                                     {"edits", &EditError::edits}},
                               origin);
  return g;
}

std::string gpu_to_json(const Gpu& g) {
  json j;
  j["name"] = g.name;
  j["display_name"] = g.display_name;
  j["vendor"] = g.vendor;
  j["arch"] = g.arch;
  j["num_cu"] = g.num_cu;
  j["wave_size"] = g.wave_size;
  j["hbm_tbps"] = g.hbm_tbps;
  j["clock_mhz"] = g.clock_mhz;
  j["lds_per_cu_kib"] = g.lds_per_cu_kib;
  j["l2_mib"] = g.l2_mib;
  j["matrix_tflops"] = {{"bf16", g.bf16_tflops}, {"fp8", g.fp8_tflops}};
  j["sources"] = g.sources;
  json params = json::object();
  for (const auto& [k, p] : g.params) params[k] = gpu_param_json(p);
  j["params"] = params;
  const auto write_table = [&](const char* key, const auto& table, const auto& entry_json) {
    if (table.empty()) return;
    json errors = json::object();
    for (const auto& [k, e] : table) errors[k] = entry_json(e);
    j[key] = errors;
  };
  write_table("model_error", g.model_error, model_error_json);
  write_table("ratio_error", g.ratio_error, ratio_error_json);
  write_table("edit_error", g.edit_error, edit_error_json);
  return j.dump(2) + "\n";
}

nlohmann::ordered_json gpu_param_json(const GpuParam& p) {
  nlohmann::ordered_json j = {{"value", p.value}, {"kind", p.kind}, {"source", p.source}};
  if (std::isfinite(p.std_error)) j["std_error"] = p.std_error;
  return j;
}

nlohmann::ordered_json model_error_json(const ModelError& e) {
  return {{"rms_pct", e.rms_pct}, {"mape_pct", e.mape_pct}, {"rows", e.rows}, {"source", e.source}};
}

nlohmann::ordered_json ratio_error_json(const RatioError& e) {
  return {{"median_pct", e.median_pct}, {"p90_pct", e.p90_pct}, {"pairs", e.pairs}, {"source", e.source}};
}

nlohmann::ordered_json edit_error_json(const EditError& e) {
  return {{"median_us", e.median_us}, {"p90_us", e.p90_us}, {"edits", e.edits}, {"source", e.source}};
}

Gpu load_gpu(const std::string& name_or_path) {
  fs::path path;
  const bool is_path = name_or_path.size() > 5 && name_or_path.ends_with(".json");
  if (is_path) {
    path = name_or_path;
  } else {
    std::string lower = name_or_path;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    path = fs::path(data_dir()) / "gpus" / (lower + ".json");
  }
  std::ifstream in(path);
  if (!in) {
    if (is_path) throw InputError("gpu", "cannot read '" + name_or_path + "'");
    throw InputError("gpu", "unknown GPU '" + name_or_path + "'; known: " + join_names(builtin_gpu_names()) +
                                " (or a path to a profile .json)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_gpu_json(ss.str(), path.string());
}

}  // namespace mlasim
