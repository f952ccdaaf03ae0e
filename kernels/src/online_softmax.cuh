#pragma once
// The online softmax of a thread's rows, in log2 units (scores already carry log2 e, so weights are exp2): a
// running maximum and a running sum of weights per row, and the log-sum-exp that a split work hands the reduce.
#include "device_primitives.cuh"

namespace mlasim::kernels {

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

template <int kRows>
struct OnlineSoftmax {
  float m[kRows];  // running maximum of the scaled scores
  float l[kRows];  // running sum of the weights, relative to m

  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int r = 0; r < kRows; ++r) m[r] = neg_inf(), l[r] = 0.f;
  }
  // Moves row r's maximum over a tile whose scaled maximum is tile_max. Returns the factor that rescales what
  // was accumulated before and sets `base`, the weights' exponent offset: the new maximum, or 0 while the row
  // has seen nothing visible (its weights then stay 0 instead of NaN).
  __device__ __forceinline__ float advance_max(int r, float tile_max, float& base) {
    const float m_new = fmaxf(m[r], tile_max);
    base = m_new == neg_inf() ? 0.f : m_new;
    const float alpha = dev::exp2_fast(m[r] - base);
    m[r] = m_new;
    return alpha;
  }
};

// ln of the softmax denominator of a row (what the reduce merges partials by), from its maximum in log2 units
// and its sum of weights; -inf for a row that saw nothing.
__device__ __forceinline__ float log_sum_exp(float m_log2, float l) {
  return l > 0.f ? (m_log2 + log2f(l)) * 0.6931471805599453f : neg_inf();
}

}  // namespace mlasim::kernels
