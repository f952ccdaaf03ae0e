#pragma once
// A scenario: one workload and the two policies compared on it (A and B), kept as JSON in data/scenarios/.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/dtype.h"

namespace mlasim::gui {

// The batch's KV lengths: every request alike, an explicit list, or drawn from a distribution with a seed.
struct BatchSpec {
  enum class Kind { uniform, list, random };
  enum class Distribution { uniform, lognormal };

  Kind kind = Kind::uniform;
  int count = 4;             // uniform, random: requests
  int context = 100000;      // uniform: KV tokens of each request
  std::vector<int> kv_lens;  // list
  Distribution distribution = Distribution::uniform;  // random
  int min_context = 1024;    // random: lengths are clamped to [min_context, max_context]
  int max_context = 131072;
  int median_context = 8192; // lognormal: the median length
  double sigma = 1.0;        // lognormal: standard deviation of ln(length)
  uint64_t seed = 1;         // random: 0..2^31-1

  // The KV lengths this describes; the same seed gives the same lengths on every platform.
  std::vector<int> lengths() const;
  bool operator==(const BatchSpec&) const = default;
};

struct Workload {
  std::string gpu = "mi355x";  // profile name (data/gpus) or a path to a profile JSON
  BatchSpec batch;
  int qlen = 1;                // query tokens per request
  int heads = 16;              // q heads
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int page_size = 1;           // tokens per KV page
  int clusters = 0;            // CUs available to the plan; 0 = the whole GPU

  // The decode batch, validated (kv granularity max(page, 16) as vLLM and ATOM pass it). Throws InputError.
  DecodeBatch make_batch() const;
  bool operator==(const Workload&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  Workload workload;
  std::array<std::string, 2> policies = {"aiter-v1:max_split_per_batch=16", "aiter-v1:max_split_per_batch=-1"};
  bool operator==(const Scenario&) const = default;
};

nlohmann::json scenario_to_json(const Scenario& s);
// Throws InputError naming the field by its path, e.g. "workload.batch.count: must be >= 1, got 0".
Scenario scenario_from_json(const nlohmann::json& j);

// File I/O. Errors name the file: InputError("scenario", "PATH: ..."); saving writes the whole file or nothing.
Scenario load_scenario(const std::string& path);
void save_scenario(const Scenario& s, const std::string& path);

}  // namespace mlasim::gui
