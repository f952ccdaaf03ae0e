#pragma once
// What many of the simulator's tests plan with: the GPU profiles (each loaded once per program), a batch of equal
// requests and a policy's plan of it, the workload our Hopper kernels run, and the rows of a committed L2 probe.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/evaluation.h"
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

// The workload our Hopper kernels run on `gpu` (a profile name): `batch` requests of `context` tokens, `heads` query
// heads, Q and KV of `dtype` (bf16 unless given), pages of 64 tokens.
inline WorkloadContext hopper_context(const std::string& gpu, int batch, int context, int heads = 128,
                                      DType dtype = DType::bf16) {
  Workload w;
  w.gpu = gpu;
  w.batch = BatchSpec::uniform(batch, context);
  w.heads = heads;
  w.q_dtype = w.kv_dtype = dtype;
  w.page_size = 64;
  return resolve(w);
}

// A row of an L2 probe's l2_carry.csv (scripts/l2_carry_probe.py): a producer, the follower and its median time.
struct ProbeRow {
  std::string producer, follower;
  double follower_us = 0;
};

// Every row of the probe CSV at `path` (none when it cannot be read).
inline std::vector<ProbeRow> probe_rows(const std::string& path) {
  std::vector<ProbeRow> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // producer,follower,samples,follower_us,...
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    ProbeRow r;
    std::string samples, us;
    std::getline(ss, r.producer, ',');
    std::getline(ss, r.follower, ',');
    std::getline(ss, samples, ',');
    std::getline(ss, us, ',');
    r.follower_us = std::stod(us);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace mlasim::sim::testing
