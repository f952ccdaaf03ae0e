#include "mlasim/kernels/mla_problem.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <tbb/parallel_for.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/kernel_traits.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::kernels {
namespace {

// A fast generator for hundreds of millions of values (std::mt19937 is too slow for 600 MB caches).
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), never exactly 0.
  float uniform() { return (static_cast<float>(next() >> 40) + 0.5f) * (2.0f / 16777216.0f) - 1.0f; }
};

std::array<float, 256> fp8_table() {
  std::array<float, 256> t{};
  for (int b = 0; b < 256; ++b) {
    const int e = (b >> 3) & 15, m = b & 7;
    float v = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
    if ((b & 0x7f) == 0x7f) v = NAN;
    t[b] = (b & 0x80) ? -v : v;
  }
  return t;
}

}  // namespace

uint16_t float_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

float fp8_e4m3_to_float(uint8_t b) {
  static const std::array<float, 256> table = fp8_table();
  return table[b];
}

uint8_t float_to_fp8_e4m3(float f) {
  // Nearest of the 126 finite magnitudes (ties to the even code); saturates at 448.
  const float a = std::min(std::fabs(f), 448.0f);
  uint8_t best = 0;
  float best_err = a;
  for (int b = 1; b < 0x7f; ++b) {
    const float err = std::fabs(fp8_e4m3_to_float(static_cast<uint8_t>(b)) - a);
    if (err < best_err || (err == best_err && (b & 1) == 0)) {
      best = static_cast<uint8_t>(b);
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best | (f < 0 ? 0x80 : 0));
}

int64_t MlaProblem::kv_bytes() const { return batch.total_kv_tokens() * DecodeBatch::kQkHeadDim * kv_elem_bytes(); }

MlaProblem MlaProblem::make(const DecodeBatch& requested, const sim::Plan& plan, uint64_t seed) {
  requested.validate();
  // A sparse plan runs over one request per query token whose rows are gathered through kv_indices (page size
  // 1, rows of a shuffled cache), which is the page table below: the gathered batch is the problem.
  const DecodeBatch batch = sim::kernel_batch(plan, requested);
  MlaProblem p;
  p.batch = batch;
  p.heads = plan.derived.num_heads_eff;
  p.qk_batch_ratio = plan.derived.qk_batch_ratio;
  if (!sim::our_kernels_run_heads(p.heads))
    throw InputError("heads", "the kernels run 16 or 128 heads per virtual batch, got " + std::to_string(p.heads));
  p.sm_scale = 1.0f / std::sqrt(static_cast<float>(DecodeBatch::kQkHeadDim));
  p.kv_scale = batch.kv_dtype == DType::fp8 ? 0.5f : 1.0f;
  const int n = batch.size();
  p.kv_indptr.assign(n + 1, 0);
  for (int r = 0; r < n; ++r) p.kv_indptr[r + 1] = p.kv_indptr[r] + batch.pages(r);
  const int pages = p.kv_indptr[n];
  SplitMix rng{seed};
  p.kv_indices.resize(pages);
  std::iota(p.kv_indices.begin(), p.kv_indices.end(), 0);
  for (int i = pages - 1; i > 0; --i) std::swap(p.kv_indices[i], p.kv_indices[rng.next() % (i + 1)]);

  const int R = p.qk_batch_ratio;
  int row = 0;
  for (int b = 0; b < n * R; ++b) {
    const int r = b / R;
    p.batch_kv_page_begin.push_back(p.kv_indptr[r]);
    p.batch_kv_len.push_back(batch.kv_lens[r]);
    p.batch_q_begin.push_back(row);
    p.batch_qlen.push_back(batch.qo_lens[r]);
    row += batch.qo_lens[r];
  }
  p.q_rows = row;
  p.q.resize(static_cast<size_t>(p.q_rows) * p.heads * DecodeBatch::kQkHeadDim);
  for (auto& x : p.q) x = float_to_bf16(rng.uniform());
  const size_t kv_elems = static_cast<size_t>(pages) * batch.page_size * DecodeBatch::kQkHeadDim;
  const bool bf16 = batch.kv_dtype == DType::bf16;
  p.kv.resize(kv_elems * (bf16 ? 2 : 1));
  // Caches of gigabytes are filled on all cores, each chunk from a generator of its own (seeded by its index, so
  // the values do not depend on the thread count).
  constexpr size_t kChunk = size_t{1} << 20;
  tbb::parallel_for(size_t{0}, (kv_elems + kChunk - 1) / kChunk, [&](size_t chunk) {
    SplitMix chunk_rng{seed ^ ((chunk + 1) * 0xd1b54a32d192ed03ull)};
    const size_t begin = chunk * kChunk, end = std::min(kv_elems, begin + kChunk);
    if (bf16) {
      auto* dst = reinterpret_cast<uint16_t*>(p.kv.data());
      for (size_t i = begin; i < end; ++i) dst[i] = float_to_bf16(chunk_rng.uniform());
      return;
    }
    // Codes drawn directly over the finite range |x| <= 2 (e4m3 exponents up to 8), never NaN.
    for (size_t i = begin; i < end; ++i) {
      uint8_t code = static_cast<uint8_t>(chunk_rng.next() % 0x41);  // 0x00..0x40: magnitudes 0 .. 2
      if (code == 0) code = 1;
      p.kv[i] = static_cast<uint8_t>(code | ((chunk_rng.next() & 1) ? 0x80 : 0));
    }
  });
  return p;
}

}  // namespace mlasim::kernels
