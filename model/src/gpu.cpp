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
  if (j.contains("ratio_error")) {
    const std::string form = "{median_pct, p90_pct, pairs, source}";
    if (!j["ratio_error"].is_object())
      throw InputError("gpu.ratio_error", "must be an object of kernel class -> " + form + " in " + origin);
    for (const auto& [k, v] : j["ratio_error"].items()) {
      const std::string field = "gpu.ratio_error." + k;
      if (!v.is_object()) throw InputError(field, "must be an object " + form + " in " + origin);
      RatioError e;
      for (const auto& [key, out] : {std::pair{"median_pct", &e.median_pct}, std::pair{"p90_pct", &e.p90_pct}}) {
        if (!v.contains(key) || !v[key].is_number() || !(v[key].get<double>() >= 0))
          throw InputError(field + "." + key, "must be a number >= 0 (%) in " + origin);
        *out = v[key].get<double>();
      }
      if (e.median_pct > e.p90_pct) throw InputError(field + ".median_pct", "must be at most p90_pct in " + origin);
      if (!v.contains("pairs")) throw InputError(field + ".pairs", "missing (an integer >= 1) in " + origin);
      e.pairs = value_as<int>(v["pairs"], field + ".pairs", origin);
      if (e.pairs < 1) throw InputError(field + ".pairs", "must be an integer >= 1 in " + origin);
      e.source = optional<std::string>(v, "source", "", field, origin);
      g.ratio_error[k] = e;
    }
  }
  if (j.contains("edit_error")) {
    const std::string form = "{median_us, p90_us, edits, source}";
    if (!j["edit_error"].is_object())
      throw InputError("gpu.edit_error", "must be an object of edit kind (fuse, remove) -> " + form + " in " + origin);
    for (const auto& [k, v] : j["edit_error"].items()) {
      const std::string field = "gpu.edit_error." + k;
      if (k != "fuse" && k != "remove") throw InputError(field, "unknown edit kind (fuse, remove) in " + origin);
      if (!v.is_object()) throw InputError(field, "must be an object " + form + " in " + origin);
      EditError e;
      for (const auto& [key, out] : {std::pair{"median_us", &e.median_us}, std::pair{"p90_us", &e.p90_us}}) {
        if (!v.contains(key) || !v[key].is_number() || !(v[key].get<double>() >= 0))
          throw InputError(field + "." + key, "must be a number >= 0 (us) in " + origin);
        *out = v[key].get<double>();
      }
      if (e.median_us > e.p90_us) throw InputError(field + ".median_us", "must be at most p90_us in " + origin);
      if (!v.contains("edits")) throw InputError(field + ".edits", "missing (an integer >= 1) in " + origin);
      e.edits = value_as<int>(v["edits"], field + ".edits", origin);
      if (e.edits < 1) throw InputError(field + ".edits", "must be an integer >= 1 in " + origin);
      e.source = optional<std::string>(v, "source", "", field, origin);
      g.edit_error[k] = e;
    }
  }
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
  if (!g.model_error.empty()) {
    json errors = json::object();
    for (const auto& [k, e] : g.model_error) errors[k] = model_error_json(e);
    j["model_error"] = errors;
  }
  if (!g.ratio_error.empty()) {
    json errors = json::object();
    for (const auto& [k, e] : g.ratio_error) errors[k] = ratio_error_json(e);
    j["ratio_error"] = errors;
  }
  if (!g.edit_error.empty()) {
    json errors = json::object();
    for (const auto& [k, e] : g.edit_error) errors[k] = edit_error_json(e);
    j["edit_error"] = errors;
  }
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
