#pragma once
// Decoding fuzz bytes into what a plan needs: a GPU profile of data/gpus, a registered policy with knob values
// drawn from its declared domains (or a stray word now and then), and a decode batch within given limits.
// Mostly valid values, so the planners and the simulator are reached; sometimes invalid ones, so their
// InputErrors are too.
#include <fuzzer/FuzzedDataProvider.h>

#include <bit>
#include <map>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/knob_domain.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::fuzz {

// Every built-in GPU profile, read once (a fuzz run calls this millions of times).
inline const std::vector<Gpu>& builtin_gpus() {
  static const std::vector<Gpu> gpus = [] {
    std::vector<Gpu> out;
    for (const std::string& name : builtin_gpu_names()) out.push_back(load_gpu(name));
    return out;
  }();
  return gpus;
}

inline const Gpu& pick_gpu(FuzzedDataProvider& in) {
  const auto& gpus = builtin_gpus();
  return gpus[in.ConsumeIntegralInRange<size_t>(0, gpus.size() - 1)];
}

// One value of `domain`, as a spec writes it.
inline std::string pick_knob_value(FuzzedDataProvider& in, const sim::KnobDomain& domain) {
  const auto& alternatives = domain.alternatives();
  const auto& a = alternatives[in.ConsumeIntegralInRange<size_t>(0, alternatives.size() - 1)];
  switch (a.kind) {
    case sim::KnobDomain::Alternative::Kind::word: return a.word;
    case sim::KnobDomain::Alternative::Kind::integers:
      return std::to_string(
          in.ConsumeIntegralInRange<int64_t>(static_cast<int64_t>(a.min), static_cast<int64_t>(a.max)));
    case sim::KnobDomain::Alternative::Kind::reals:
      return sim::format_knob_number(in.ConsumeFloatingPointInRange<double>(a.min, a.max));
  }
  return a.word;
}

// A spec for a registered policy: each knob left at its default, drawn from its domain, or (rarely) any word.
inline std::string pick_policy_spec(FuzzedDataProvider& in) {
  const auto& registry = sim::policy_registry();
  const sim::PolicyInfo& info = registry[in.ConsumeIntegralInRange<size_t>(0, registry.size() - 1)];
  std::string spec = info.name;
  char separator = ':';
  for (const sim::KnobInfo& knob : info.knobs) {
    const int how = in.ConsumeIntegralInRange<int>(0, 15);
    if (how < 5) continue;  // the default
    const std::string value = how == 15 ? in.ConsumeRandomLengthString(8) : pick_knob_value(in, knob.domain);
    spec += separator + knob.name + "=" + value;
    separator = ',';
  }
  return spec;
}

struct BatchLimits {
  int max_requests = 4096;
  int max_kv_len = 10'000'000;
  int max_qo_len = 8;
};

// A power of two 2^0..2^max_log2, or (rarely) any small integer, to reach the validation of each field.
inline int pick_power_of_two(FuzzedDataProvider& in, int max_log2) {
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) return in.ConsumeIntegralInRange<int>(-1, 2048);
  return 1 << in.ConsumeIntegralInRange<int>(0, max_log2);
}

// 1..max, log-uniform: a power-of-two range first, then a value in it. Every value stays reachable, but small
// batches and contexts are as common as large ones, where uniform bytes would make the average batch 2048 requests
// of 5 million tokens (plans of up to a million works, seconds each under the sanitizers).
inline int pick_log_uniform(FuzzedDataProvider& in, int max) {
  const int top = std::bit_width(static_cast<unsigned>(max)) - 1;
  const int e = in.ConsumeIntegralInRange<int>(0, top);
  const int low = 1 << e;
  const int high = e == top ? max : (low << 1) - 1;
  return in.ConsumeIntegralInRange<int>(low, high);
}

inline DecodeBatch pick_batch(FuzzedDataProvider& in, const BatchLimits& limits) {
  DecodeBatch b;
  const int requests = pick_log_uniform(in, limits.max_requests);
  const bool uniform = in.ConsumeBool();
  const int context = pick_log_uniform(in, limits.max_kv_len);
  const int qo_len = in.ConsumeIntegralInRange<int>(1, limits.max_qo_len);
  const bool ragged_qo = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  b.kv_lens.reserve(static_cast<size_t>(requests));
  b.qo_lens.reserve(static_cast<size_t>(requests));
  for (int r = 0; r < requests; ++r) {
    // An exhausted provider gives 1s: a long batch of short requests after the lengths the bytes spelled.
    b.kv_lens.push_back(uniform ? context : pick_log_uniform(in, limits.max_kv_len));
    b.qo_lens.push_back(ragged_qo ? in.ConsumeIntegralInRange<int>(1, limits.max_qo_len) : qo_len);
  }
  b.q_heads = in.ConsumeIntegralInRange<int>(0, 31) == 0 ? in.ConsumeIntegralInRange<int>(-8, 256)
                                                         : 8 * in.ConsumeIntegralInRange<int>(1, 16);
  b.q_dtype = in.ConsumeBool() ? DType::fp8 : DType::bf16;
  b.kv_dtype = in.ConsumeBool() ? DType::fp8 : DType::bf16;
  b.page_size = pick_power_of_two(in, 10);
  b.kv_granularity = pick_power_of_two(in, 10);
  b.causal = in.ConsumeBool();
  // One batch in four is sparse (top-k), one in sixteen two-scope (below): usually at page size 1, as sparse decode
  // needs, now and then not; half of them with per-request top-k lengths (a 0 among them is refused).
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    b.topk = pick_log_uniform(in, limits.max_kv_len);
    if (in.ConsumeIntegralInRange<int>(0, 7) != 0) b.page_size = 1;
    if (in.ConsumeBool())
      for (int r = 0; r < requests; ++r) b.topk_lens.push_back(in.ConsumeIntegralInRange<int>(0, b.topk));
  } else if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    // DeepSeek-V4's two scopes: a window, compressed rows of a ratio (0: none, 1: refused) with or without an
    // indexer top-k, run in one pass or merged; at page size 1 but now and then not.
    b.scopes.window = pick_log_uniform(in, limits.max_kv_len);
    b.scopes.compress_ratio = in.ConsumeBool() ? 0 : pick_log_uniform(in, 256);
    if (b.scopes.compress_ratio > 0 && in.ConsumeBool()) b.scopes.extra_topk = pick_log_uniform(in, limits.max_kv_len);
    b.scopes.run = in.ConsumeBool() ? TwoScopes::Run::merged : TwoScopes::Run::one_pass;
    if (in.ConsumeIntegralInRange<int>(0, 7) != 0) b.page_size = 1;
  }
  return b;
}

// The CUs a plan may use: usually all (0), else any count up to a little past the GPU's.
inline int pick_clusters(FuzzedDataProvider& in, const Gpu& gpu) {
  return in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(-1, gpu.num_cu + 8);
}

}  // namespace mlasim::fuzz
