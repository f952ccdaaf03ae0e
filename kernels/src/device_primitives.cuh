#pragma once
// The per-vendor device primitives behind one small interface. Kernels think in logical warps of 32 lanes (an
// AMD wave of 64 holds two) and in the m16n8k16 bf16/fp16 matrix fragment layout:
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
#if defined(MLASIM_NV_PRIMITIVES)
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  auto round = [](float f) -> uint32_t {
    uint32_t u = __float_as_uint(f);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  };
  return round(lo) | (round(hi) << 16);
#endif
}

// 2^x for the softmax weights: the hardware approximation (2 ulp, subnormals flushed) where there is one.
__device__ __forceinline__ float exp2_fast(float x) {
#if defined(MLASIM_NV_PRIMITIVES)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return exp2f(x);
#endif
}
__device__ __forceinline__ float bf16_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }

// fp8 e4m3 (OCP "fn" variant) to float, exact: the bits land in a float's exponent/mantissa, scaled by 2^120.
__device__ __forceinline__ float fp8_e4m3_to_float(uint32_t byte) {
  const uint32_t bits = ((byte & 0x80u) << 24) | ((byte & 0x7fu) << 20);
  return __uint_as_float(bits) * 1.329227995784916e36f;  // 2^120
}

// fp16 bits (as the low 16 bits) to float, exact: the bits land in a float's exponent/mantissa, scaled by 2^112.
__device__ __forceinline__ float f16_to_float(uint32_t h) {
  return __uint_as_float(((h & 0x8000u) << 16) | ((h & 0x7fffu) << 13)) * 5.192296858534828e33f;  // 2^112
}
__device__ __forceinline__ float f16_lo(uint32_t v) { return f16_to_float(v & 0xffffu); }
__device__ __forceinline__ float f16_hi(uint32_t v) { return f16_to_float(v >> 16); }

// Two floats rounded to an fp16 pair (low half = first), round to nearest even; beyond the range -> inf.
__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
#if defined(MLASIM_NV_PRIMITIVES)
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  auto round = [](float f) -> uint32_t {
    const uint32_t sign = (__float_as_uint(f) >> 16) & 0x8000u;
    const float a = fabsf(f);
    if (a >= 65520.f) return sign | 0x7c00u;
    if (a < 6.103515625e-05f) return sign | static_cast<uint32_t>(rintf(a * 16777216.f));  // subnormal: 2^24
    const uint32_t u = __float_as_uint(a);
    return sign | (((u + 0xfffu + ((u >> 13) & 1u)) >> 13) - (112u << 10));
  };
  return round(lo) | (round(hi) << 16);
#endif
}

// Two packed fp8 e4m3 (low 16 bits, low byte first) to an fp16 pair; exact, every e4m3 value fits in fp16.
__device__ __forceinline__ uint32_t fp8x2_to_f16x2(uint32_t pair) {
#if defined(MLASIM_NV_PRIMITIVES)
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(static_cast<unsigned short>(pair & 0xffffu)));
  return h2;
#else
  return pack_f16x2(fp8_e4m3_to_float(pair & 0xffu), fp8_e4m3_to_float((pair >> 8) & 0xffu));
#endif
}

// Two floats to an fp8 e4m3 pair (low byte = first), round to nearest even, saturating at +-448.
__device__ __forceinline__ uint32_t pack_e4m3x2(float lo, float hi) {
#if defined(MLASIM_NV_PRIMITIVES)
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  auto one = [](float f) -> uint32_t {
    const uint32_t sign = (__float_as_uint(f) >> 24) & 0x80u;
    const float a = fminf(fabsf(f), 448.f);
    if (a < 0.015625f) return sign | static_cast<uint32_t>(rintf(a * 512.f));  // subnormal: 2^-9 steps
    int e;
    const float m = frexpf(a, &e);  // a = m 2^e, m in [0.5, 1)
    float q = rintf(m * 16.f);      // 4 significant bits
    if (q == 16.f) q = 8.f, ++e;
    const uint32_t v = (static_cast<uint32_t>(e + 6) << 3) | (static_cast<uint32_t>(q) & 7u);
    return sign | (v > 0x7eu ? 0x7eu : v);
  };
  return one(lo) | (one(hi) << 8);
#endif
}

// Bytes of a and b interleaved: (a0 b0 a1 b1) for kHigh false, (a2 b2 a3 b3) for kHigh true (low byte first).
template <bool kHigh>
__device__ __forceinline__ uint32_t interleave_bytes(uint32_t a, uint32_t b) {
#if defined(MLASIM_NV_PRIMITIVES)
  return __byte_perm(a, b, kHigh ? 0x7362u : 0x5140u);
#else
  if (kHigh) a >>= 16, b >>= 16;
  return (a & 0xffu) | ((b & 0xffu) << 8) | ((a & 0xff00u) << 8) | ((b & 0xff00u) << 16);
#endif
}

#if !defined(MLASIM_NV_PRIMITIVES)
// The m16n8k16 product from shuffles; Lo/Hi decode the two halves of a fragment register.
template <float (*Lo)(uint32_t), float (*Hi)(uint32_t)>
__device__ __forceinline__ void mma_16816_generic(float c[4], const uint32_t a[4], const uint32_t b[2]) {
  const int lane = lane_id();
  const int g = lane >> 2, t = lane & 3;
  for (int tk = 0; tk < 4; ++tk) {
    // Row g / g+8 of A and columns 2t, 2t+1 of B, for k = 2tk, 2tk+1, 2tk+8, 2tk+9.
    const uint32_t a0 = shfl(a[0], 4 * g + tk), a1 = shfl(a[1], 4 * g + tk);
    const uint32_t a2 = shfl(a[2], 4 * g + tk), a3 = shfl(a[3], 4 * g + tk);
    const uint32_t b00 = shfl(b[0], 4 * (2 * t) + tk), b01 = shfl(b[1], 4 * (2 * t) + tk);
    const uint32_t b10 = shfl(b[0], 4 * (2 * t + 1) + tk), b11 = shfl(b[1], 4 * (2 * t + 1) + tk);
    c[0] += Lo(a0) * Lo(b00) + Hi(a0) * Hi(b00) + Lo(a2) * Lo(b01) + Hi(a2) * Hi(b01);
    c[1] += Lo(a0) * Lo(b10) + Hi(a0) * Hi(b10) + Lo(a2) * Lo(b11) + Hi(a2) * Hi(b11);
    c[2] += Lo(a1) * Lo(b00) + Hi(a1) * Hi(b00) + Lo(a3) * Lo(b01) + Hi(a3) * Hi(b01);
    c[3] += Lo(a1) * Lo(b10) + Hi(a1) * Hi(b10) + Lo(a3) * Lo(b11) + Hi(a3) * Hi(b11);
  }
}
#endif

// D += A * B for one m16n8k16 bf16 fragment set.
__device__ __forceinline__ void mma_bf16_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(MLASIM_NV_PRIMITIVES)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  mma_16816_generic<bf16_lo, bf16_hi>(c, a, b);
#endif
}

// D += A * B for one m16n8k16 fp16 fragment set (fp32 accumulation).
__device__ __forceinline__ void mma_f16_16816(float c[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(MLASIM_NV_PRIMITIVES)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  mma_16816_generic<f16_lo, f16_hi>(c, a, b);
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
