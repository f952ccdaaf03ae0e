#pragma once
// The per-vendor device primitives behind one small interface. Kernels think in logical warps of 32 lanes (an
// AMD wave of 64 holds two) and in the m16n8k16 bf16 matrix fragment layout:
//   A (16x16, row major): a[0]=A[g][2t..2t+1] a[1]=A[g+8][2t..] a[2]=A[g][2t+8..] a[3]=A[g+8][2t+8..]
//   B (16x8, k x n):      b[0]=B[2t..2t+1][g] b[1]=B[2t+8..2t+9][g]
//   C (16x8 fp32):        c[0..1]=C[g][2t..2t+1] c[2..3]=C[g+8][2t..2t+1]      (g = lane/4, t = lane%4)
// NVIDIA: mma.sync, ldmatrix and cp.async. Elsewhere: the same contracts from shuffles and plain loads
// (correct and portable; the AMD matrix-core path is future work, see docs/kernels.md).
#include <cstdint>

#include "mlasim/kernels/gpu_runtime.h"

#if defined(MLASIM_GPU_NVIDIA) && !defined(MLASIM_GENERIC_PRIMITIVES)
#define MLASIM_NV_PRIMITIVES 1
#endif

namespace mlasim::kernels::dev {

inline constexpr int kLanes = 32;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kLanes - 1); }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x) / kLanes; }

__device__ __forceinline__ float shfl_xor(float v, int mask) {
#if defined(MLASIM_GPU_NVIDIA)
  return __shfl_xor_sync(0xffffffffu, v, mask);
#else
  return __shfl_xor(v, mask, kLanes);
#endif
}

__device__ __forceinline__ uint32_t shfl(uint32_t v, int src) {
#if defined(MLASIM_GPU_NVIDIA)
  return __shfl_sync(0xffffffffu, v, src);
#else
  return static_cast<uint32_t>(__shfl(static_cast<int>(v), src, kLanes));
#endif
}

// Two floats rounded to a bf16 pair (low half = first), round to nearest even.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  auto round = [](float f) -> uint32_t {
    uint32_t u = __float_as_uint(f);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  };
  return round(lo) | (round(hi) << 16);
}
__device__ __forceinline__ float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

// fp8 e4m3 (OCP "fn" variant) to float, exact: the bits land in a float's exponent/mantissa, scaled by 2^120.
__device__ __forceinline__ float fp8_e4m3_to_float(uint32_t byte) {
  const uint32_t bits = ((byte & 0x80u) << 24) | ((byte & 0x7fu) << 20);
  return __uint_as_float(bits) * 1.329227995784916e36f;  // 2^120
}

// Four packed fp8 bytes to four bf16 (two pairs, low byte first); exact, since every e4m3 value fits in bf16.
__device__ __forceinline__ void fp8x4_to_bf16x4(uint32_t packed, uint32_t* out) {
#if defined(MLASIM_NV_PRIMITIVES)
  // Hardware e4m3x2 -> f16x2 (exact), then f16 -> f32 -> bf16 pairs (exact for e4m3 values).
  for (int k = 0; k < 2; ++k) {
    const auto pair = static_cast<unsigned short>(packed >> (16 * k));
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(pair));
    float lo, hi;
    asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(static_cast<unsigned short>(h2 & 0xffffu)));
    asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(static_cast<unsigned short>(h2 >> 16)));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(out[k]) : "f"(hi), "f"(lo));
  }
#else
  for (int k = 0; k < 2; ++k) {
    const uint32_t lo = __float_as_uint(fp8_e4m3_to_float((packed >> (16 * k)) & 0xffu)) >> 16;
    const uint32_t hi = __float_as_uint(fp8_e4m3_to_float((packed >> (16 * k + 8)) & 0xffu)) >> 16;
    out[k] = lo | (hi << 16);
  }
#endif
}

// D += A * B for one m16n8k16 bf16 fragment set.
__device__ __forceinline__ void mma_bf16_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(MLASIM_NV_PRIMITIVES)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  const int lane = lane_id();
  const int g = lane >> 2, t = lane & 3;
  for (int tk = 0; tk < 4; ++tk) {
    // Row g / g+8 of A and columns 2t, 2t+1 of B, for k = 2tk, 2tk+1, 2tk+8, 2tk+9.
    const uint32_t a0 = shfl(a[0], 4 * g + tk), a1 = shfl(a[1], 4 * g + tk);
    const uint32_t a2 = shfl(a[2], 4 * g + tk), a3 = shfl(a[3], 4 * g + tk);
    const uint32_t b00 = shfl(b[0], 4 * (2 * t) + tk), b01 = shfl(b[1], 4 * (2 * t) + tk);
    const uint32_t b10 = shfl(b[0], 4 * (2 * t + 1) + tk), b11 = shfl(b[1], 4 * (2 * t + 1) + tk);
    c[0] += bf16_lo(a0) * bf16_lo(b00) + bf16_hi(a0) * bf16_hi(b00) + bf16_lo(a2) * bf16_lo(b01) +
            bf16_hi(a2) * bf16_hi(b01);
    c[1] += bf16_lo(a0) * bf16_lo(b10) + bf16_hi(a0) * bf16_hi(b10) + bf16_lo(a2) * bf16_lo(b11) +
            bf16_hi(a2) * bf16_hi(b11);
    c[2] += bf16_lo(a1) * bf16_lo(b00) + bf16_hi(a1) * bf16_hi(b00) + bf16_lo(a3) * bf16_lo(b01) +
            bf16_hi(a3) * bf16_hi(b01);
    c[3] += bf16_lo(a1) * bf16_lo(b10) + bf16_hi(a1) * bf16_hi(b10) + bf16_lo(a3) * bf16_lo(b11) +
            bf16_hi(a3) * bf16_hi(b11);
  }
#endif
}

// Four 8x8 b16 matrices from shared memory; lane l gives the address (base + offset) of row l%8 of matrix l/8.
// r[m] of lane l = matrix m's (row l/4, columns 2(l%4), 2(l%4)+1).
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const unsigned char* base, uint32_t offset) {
#if defined(MLASIM_NV_PRIMITIVES)
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(base + offset));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  const int lane = lane_id();
  for (int m = 0; m < 4; ++m) {
    const uint32_t row = shfl(offset, 8 * m + (lane >> 2));
    r[m] = *reinterpret_cast<const uint32_t*>(base + row + 4 * (lane & 3));
  }
#endif
}

// As ldmatrix_x4, transposed: r[m] of lane l = matrix m's (rows 2(l%4), 2(l%4)+1; column l/4).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const unsigned char* base, uint32_t offset) {
#if defined(MLASIM_NV_PRIMITIVES)
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(base + offset));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#else
  const int lane = lane_id();
  for (int m = 0; m < 4; ++m) {
    const uint32_t row0 = shfl(offset, 8 * m + 2 * (lane & 3));
    const uint32_t row1 = shfl(offset, 8 * m + 2 * (lane & 3) + 1);
    const uint32_t lo = *reinterpret_cast<const uint16_t*>(base + row0 + 2 * (lane >> 2));
    const uint32_t hi = *reinterpret_cast<const uint16_t*>(base + row1 + 2 * (lane >> 2));
    r[m] = lo | (hi << 16);
  }
#endif
}

// 16-byte global -> shared copy, asynchronous where the hardware allows; `valid` false writes zeros.
__device__ __forceinline__ void copy_async_16(unsigned char* dst, const unsigned char* src, bool valid) {
#if defined(MLASIM_NV_PRIMITIVES)
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(src), "r"(src_bytes));
#else
  *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
}

__device__ __forceinline__ void copy_async_commit() {
#if defined(MLASIM_NV_PRIMITIVES)
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `N` committed groups are still in flight.
template <int N>
__device__ __forceinline__ void copy_async_wait() {
#if defined(MLASIM_NV_PRIMITIVES)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

}  // namespace mlasim::kernels::dev
