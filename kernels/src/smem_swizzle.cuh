#pragma once
// Byte offsets of the shared-memory operand layouts the Hopper kernels use (PTX ISA, "matrix descriptor"):
//   no swizzle: 8x8 core matrices of 16-byte rows, each stored as 128 contiguous bytes;
//   128-byte swizzle: atoms of 8 rows x 128 bytes (1024-byte aligned), 16-byte chunk j of row r stored at chunk
//     j ^ (r % 8) of the row's 128-byte line;
//   64-byte swizzle: atoms of 8 rows x 64 bytes (512-byte aligned), chunk j of row r at j ^ ((r / 2) % 4).
// A swizzled row keeps its bytes in one line, so a copy of a global 128-byte line stays one request, and the
// eight rows of an atom spread a column of chunks over all the banks.
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

// Chunk `chunk` (0..7) of row `row` in a column of 128-byte swizzled rows.
__host__ __device__ constexpr int swizzle128_offset(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// Chunk `chunk` (0..3) of row `row` in a column of 64-byte swizzled rows.
__host__ __device__ constexpr int swizzle64_offset(int row, int chunk) {
  return row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4);
}

// Chunk `chunk` of row `row` in the no-swizzle layout: core matrices of 8 rows stacked along the rows, chunk
// columns `column_bytes` apart.
__host__ __device__ constexpr int core_matrix_offset(int row, int chunk, int column_bytes) {
  return chunk * column_bytes + (row >> 3) * 128 + (row & 7) * 16;
}

// Chunk `chunk` (of 16 bytes, any number) of row `row` in a K-major operand of 128-byte swizzled columns of
// kColumnBytes each (a row's 16-byte chunks 8a .. 8a + 7 in column a).
template <int kColumnBytes>
__host__ __device__ constexpr int swizzle128_chunk_offset(int row, int chunk) {
  return (chunk >> 3) * kColumnBytes + swizzle128_offset(row, chunk & 7);
}

// Element k of row n of a K-major 16-bit operand in 128-byte swizzled columns of 64 elements, kColumnBytes each.
template <int kColumnBytes>
__host__ __device__ constexpr int swizzle128_half_offset(int n, int k) {
  const int e = k & 63;
  return (k >> 6) * kColumnBytes + swizzle128_offset(n, e >> 3) + (e & 7) * 2;
}

// Byte b (dim b, 0..575) of row r of an fp8 K-major operand of kRows rows: dims 0..511 in four 128-byte swizzled
// columns of 128 dims, dims 512..575 in a tail of the 64-byte swizzle, so the operand is exactly kRows x 576 bytes.
template <int kRows>
__host__ __device__ constexpr int fp8_operand_offset(int r, int b) {
  if (b < 512) return (b >> 7) * (kRows * 128) + swizzle128_offset(r, (b >> 4) & 7) + (b & 15);
  return 4 * kRows * 128 + swizzle64_offset(r, (b - 512) >> 4) + (b & 15);
}

}  // namespace mlasim::kernels
