#pragma once
// What many of the simulator's tests plan with: the GPU profiles (each loaded once per program), a batch of equal
// requests and a policy's plan of it.
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim::testing {

inline constexpr double kFp8KvBytesPerToken = 576.0;  // 512 latent + 64 RoPE bytes

inline const Gpu& mi355x() {
  static const Gpu profile = load_gpu("mi355x");
  return profile;
}

inline const Gpu& h100() {
  static const Gpu profile = load_gpu("h100");
  return profile;
}

// The H100's profile for "h100", the MI355X's for any other name.
inline const Gpu& gpu(const std::string& name) { return name == "h100" ? h100() : mi355x(); }

// `batch` requests of `context` KV tokens, `heads` query heads and `qlen` query tokens each (fp8 Q and KV, the
// DecodeBatch defaults).
inline DecodeBatch uniform(int batch, int context, int heads = 16, int qlen = 1) {
  DecodeBatch b = DecodeBatch::uniform(batch, context, qlen);
  b.q_heads = heads;
  return b;
}

// The plan policy `spec` makes for `batch` on the MI355X, on `clusters` CUs (0: all of them).
inline Plan plan(const std::string& spec, const DecodeBatch& batch, int clusters = 0) {
  return make_policy(spec)->plan({batch, mi355x(), clusters});
}

// The plan policy `spec` makes for `batch` on the whole of GPU `on` (gpu() above).
inline Plan plan(const std::string& spec, const DecodeBatch& batch, const std::string& on) {
  return make_policy(spec)->plan({batch, gpu(on), 0});
}

}  // namespace mlasim::sim::testing
