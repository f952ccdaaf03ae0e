#include "mlasim/model/gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mlasim/model/input_error.h"

namespace mlasim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

template <typename T>
T required(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key)) throw InputError(std::string("gpu.") + key, "missing in " + origin);
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(std::string("gpu.") + key, "has the wrong type in " + origin);
  }
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
  } catch (const json::parse_error& e) {
    throw InputError("gpu", origin + " is not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw InputError("gpu", origin + " must hold a JSON object");
  Gpu g;
  g.name = required<std::string>(j, "name", origin);
  g.display_name = j.value("display_name", g.name);
  g.vendor = required<std::string>(j, "vendor", origin);
  g.arch = required<std::string>(j, "arch", origin);
  g.num_cu = required<int>(j, "num_cu", origin);
  if (g.num_cu <= 0 || g.num_cu > 4096)
    throw InputError("gpu.num_cu", "must be 1..4096, got " + std::to_string(g.num_cu) + " in " + origin);
  g.wave_size = j.value("wave_size", g.vendor == "nvidia" ? 32 : 64);
  g.hbm_tbps = required<double>(j, "hbm_tbps", origin);
  if (g.hbm_tbps <= 0) throw InputError("gpu.hbm_tbps", "must be > 0 in " + origin);
  g.clock_mhz = j.value("clock_mhz", 0.0);
  g.lds_per_cu_kib = j.value("lds_per_cu_kib", 0.0);
  g.l2_mib = j.value("l2_mib", 0.0);
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
    for (const auto& [k, v] : j["sources"].items()) g.sources[k] = v.get<std::string>();
  if (j.contains("params")) {
    for (const auto& [k, v] : j["params"].items()) {
      if (!v.is_object() || !v.contains("value") || !v["value"].is_number())
        throw InputError("gpu.params." + k, "must be an object with a numeric 'value' in " + origin);
      g.params[k] = GpuParam{v["value"].get<double>(), v.value("kind", "assumed"), v.value("source", "")};
      if (v.contains("std_error") && v["std_error"].is_number()) g.params[k].std_error = v["std_error"].get<double>();
    }
  }
  if (j.contains("model_error")) {
    for (const auto& [k, v] : j["model_error"].items()) {
      if (!v.is_object() || !v.contains("rms_pct") || !v["rms_pct"].is_number())
        throw InputError("gpu.model_error." + k, "must be an object with a numeric 'rms_pct' in " + origin);
      g.model_error[k] =
          ModelError{v["rms_pct"].get<double>(), v.value("mape_pct", 0.0), v.value("rows", 0), v.value("source", "")};
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
    throw InputError("gpu", "unknown GPU '" + name_or_path + "'; known: " + join(builtin_gpu_names()) +
                                " (or a path to a profile .json)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_gpu_json(ss.str(), path.string());
}

}  // namespace mlasim
