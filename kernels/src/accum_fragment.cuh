#pragma once
// The fp32 accumulators one thread holds of a matrix product, in the layout that mma.sync m16n8 and wgmma m64nN
// share. A warp holds 16 rows (of a wgmma's 64, warp w holds rows 16w ..): lane (g = lane / 4, t = lane % 4) holds
// rows g and g + 8 and, in each block of 8 columns, columns 2t and 2t + 1. Register i is
//   row g + 8 half(i),  column 8 block(i) + 2t + pair(i).
// The kernels name rows and columns by what they are (packed rows, tokens, value dims) through these accessors.
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

template <int kRegs>
struct AccumFragment {
  static_assert(kRegs % 4 == 0, "four registers per block of 8 columns");
  static constexpr int kBlocks = kRegs / 4;

  float v[kRegs];

  // Register of column block j, row half h (0: row g, 1: row g + 8) and element e of the lane's column pair.
  __host__ __device__ static constexpr int index(int j, int h, int e) { return 4 * j + 2 * h + e; }
  __host__ __device__ static constexpr int half(int i) { return (i >> 1) & 1; }
  __host__ __device__ static constexpr int block(int i) { return i >> 2; }
  __host__ __device__ static constexpr int pair(int i) { return i & 1; }
  // Row of register i among the warp's 16, and its column.
  __host__ __device__ static constexpr int row(int i, int g) { return g + 8 * half(i); }
  __host__ __device__ static constexpr int column(int i, int t) { return 8 * block(i) + 2 * t + pair(i); }

  __device__ float& operator[](int i) { return v[i]; }
  __device__ float operator[](int i) const { return v[i]; }
  __device__ float& at(int j, int h, int e) { return v[index(j, h, e)]; }
  // The four registers of column block j: the C operand of one mma.sync m16n8.
  __device__ __forceinline__ float* block_regs(int j) { return v + 4 * j; }

  __device__ __forceinline__ void fill(float x) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) v[i] = x;
  }
  // Multiplies row g by f0 and row g + 8 by f1.
  __device__ __forceinline__ void scale_rows(float f0, float f1) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) v[i] *= half(i) ? f1 : f0;
  }
};

}  // namespace mlasim::kernels
