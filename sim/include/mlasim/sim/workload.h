#pragma once
// A workload: everything that says what runs (the batch's lengths, the attention shape) and where (the GPU and
// the CUs the plan may use). The CLI's workload flags, the explorer's workload panel, scenario files and
// validation campaigns all describe one of these; `make_batch()` turns it into the DecodeBatch policies plan.
//
//   Workload w;                       // 4 x 100000 tokens, 16 heads, fp8, page 1 on mi355x
//   w.batch = BatchSpec::uniform(128, 4096);
//   DecodeBatch b = w.make_batch();   // validated; throws InputError naming the field
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/dtype.h"

namespace mlasim::sim {

// The batch's KV lengths: every request alike, an explicit list, or drawn from a distribution with a seed.
struct BatchSpec {
  enum class Kind { uniform, list, random };
  enum class Distribution { uniform, lognormal };

  Kind kind = Kind::uniform;
  int count = 4;                                      // uniform, random: requests
  int context = 100000;                               // uniform: KV tokens of each request
  std::vector<int> kv_lens;                           // list
  Distribution distribution = Distribution::uniform;  // random
  int min_context = 1024;                             // random: lengths are clamped to [min_context, max_context]
  int max_context = 131072;
  int median_context = 8192;  // lognormal: the median length
  double sigma = 1.0;         // lognormal: standard deviation of ln(length)
  uint64_t seed = 1;          // random: 0..2^31-1

  static BatchSpec uniform(int count, int context);
  static BatchSpec list(std::vector<int> kv_lens);

  // Requests in the batch.
  int size() const { return kind == Kind::list ? static_cast<int>(kv_lens.size()) : count; }
  // The KV lengths this describes; the same seed gives the same lengths on every platform.
  std::vector<int> lengths() const;
  bool operator==(const BatchSpec&) const = default;
};

struct Workload {
  std::string gpu = "mi355x";  // profile name (data/gpus) or a path to a profile JSON
  BatchSpec batch;
  int qlen = 1;              // query tokens of every request, unless qo_lens lists them
  std::vector<int> qo_lens;  // query tokens per request (non-uniform MTP); empty: qlen each
  int heads = 16;            // q heads
  int kv_heads = 1;
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int page_size = 1;                  // tokens per KV page
  std::optional<int> kv_granularity;  // planner granule in pages; unset: max(page_size, 16), as vLLM and ATOM pass it
  bool causal = true;
  int clusters = 0;  // CUs available to the plan; 0 = the whole GPU
  // Sparse (DSA top-k) decode: rows each query token selects from its context (fewer when the context is
  // shorter); 0 = dense. topk_lens: per request (<= topk, FlashMLA's topk_length); empty = topk each.
  int topk = 0;
  std::vector<int> topk_lens;
  // DeepSeek-V4's two scopes (a sliding window plus compressed rows) instead of a top-k; off by default. JSON:
  // "dsv4": {"window", "compress_ratio", "extra_topk", "run"} or a layer kind ("csa", "hca", "swa").
  TwoScopes scopes;

  int granularity() const;
  // The decode batch, validated. Throws InputError naming the field (qo_lens when its count does not match).
  DecodeBatch make_batch() const;
  bool operator==(const Workload&) const = default;
};

// JSON with the member names above; the batch is an object {"kind": ..., fields of that kind}. Fields left out
// keep their defaults; unknown fields are errors. Errors name the field by its path under `path`
// (e.g. "workload.batch.count: must be 1..65536, got 0").
nlohmann::json workload_to_json(const Workload& w);
Workload workload_from_json(const nlohmann::json& j, const std::string& path = "workload");

// The context label of a batch: the tokens per request when all are equal, else "ragged".
std::string context_label(const std::vector<int>& kv_lens);

// A workload in one short line, as campaign listings and timeline summaries name it: "b24x2048 h128 q1 bf16 p64 c0"
// (requests x context, heads, query length, KV dtype, page size, clusters).
std::string workload_label(const Workload& w);

}  // namespace mlasim::sim
