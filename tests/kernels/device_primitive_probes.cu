// The kernels behind device_primitive_probes.h: each maps its inputs through one device primitive.
#include "device_primitive_probes.h"

#include "device_primitives.cuh"
#include "mla_decode_tile.cuh"
#include "mlasim/kernels/gpu_check.h"
#include "smem_swizzle.cuh"

namespace mlasim::kernels::probe {
namespace {

template <class Out, class In, class F>
__global__ void map_kernel(const In* in, Out* out, int n, F f) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = f(in[i]);
}

// f(x) for every x of `in`, evaluated on the device.
template <class Out, class In, class F>
std::vector<Out> map_on_device(const std::vector<In>& in, F f) {
  const int n = static_cast<int>(in.size());
  std::vector<Out> out(in.size());
  if (n == 0) return out;
  In* d_in = nullptr;
  Out* d_out = nullptr;
  MLASIM_GPU_CHECK(hipMalloc(reinterpret_cast<void**>(&d_in), in.size() * sizeof(In)));
  MLASIM_GPU_CHECK(hipMalloc(reinterpret_cast<void**>(&d_out), in.size() * sizeof(Out)));
  MLASIM_GPU_CHECK(hipMemcpy(d_in, in.data(), in.size() * sizeof(In), hipMemcpyHostToDevice));
  map_kernel<<<(n + 255) / 256, 256>>>(d_in, d_out, n, f);
  MLASIM_GPU_CHECK(hipGetLastError());
  MLASIM_GPU_CHECK(hipMemcpy(out.data(), d_out, out.size() * sizeof(Out), hipMemcpyDeviceToHost));
  MLASIM_GPU_CHECK(hipFree(d_in));
  MLASIM_GPU_CHECK(hipFree(d_out));
  return out;
}

struct Fp8ToFloat {
  __device__ float operator()(uint32_t code) const { return dev::fp8_e4m3_to_float(code); }
};
struct Fp8PairToF16Pair {
  __device__ uint32_t operator()(uint32_t pair) const { return dev::fp8x2_to_f16x2(pair); }
};
struct PackE4m3 {
  __device__ uint32_t operator()(FloatPair x) const { return dev::pack_e4m3x2(x.lo, x.hi); }
};
struct PackF16 {
  __device__ uint32_t operator()(FloatPair x) const { return dev::pack_f16x2(x.lo, x.hi); }
};
struct PackBf16 {
  __device__ uint32_t operator()(FloatPair x) const { return dev::pack_bf16x2(x.lo, x.hi); }
};
struct DecodeHalves {
  __device__ HalfDecodes operator()(uint32_t v) const {
    return {dev::f16_lo(v), dev::f16_hi(v), dev::bf16_lo(v), dev::bf16_hi(v)};
  }
};
struct Interleave {
  __device__ WordPair operator()(WordPair x) const {
    return {dev::interleave_bytes<false>(x.a, x.b), dev::interleave_bytes<true>(x.a, x.b)};
  }
};

struct LayoutOffset {
  Layout layout;
  int columns;
  __device__ int operator()(int i) const {
    const int r = i / columns, c = i % columns;
    switch (layout) {
      case Layout::swizzle128: return swizzle128_offset(r, c);
      case Layout::swizzle64: return swizzle64_offset(r, c);
      case Layout::core_matrix_1k: return core_matrix_offset(r, c, 1024);
      case Layout::bf16_stage: return swizzle128_chunk_offset<64 * 128>(r, c);
      case Layout::fp16_p: return swizzle128_half_offset<16 * 128>(r, c);
      case Layout::fp8_tile: return fp8_operand_offset<64>(r, c);
      case Layout::fp8_q: return fp8_operand_offset<32>(r, c);
    }
    return -1;
  }
};
struct PColumn {
  __device__ int operator()(int tau) const { return fp8_p_column(tau); }
};

std::vector<int> indices(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

std::vector<float> fp8_e4m3_to_float(const std::vector<uint32_t>& codes) {
  return map_on_device<float>(codes, Fp8ToFloat{});
}
std::vector<uint32_t> fp8x2_to_f16x2(const std::vector<uint32_t>& pairs) {
  return map_on_device<uint32_t>(pairs, Fp8PairToF16Pair{});
}
std::vector<uint32_t> pack_e4m3x2(const std::vector<FloatPair>& in) { return map_on_device<uint32_t>(in, PackE4m3{}); }
std::vector<uint32_t> pack_f16x2(const std::vector<FloatPair>& in) { return map_on_device<uint32_t>(in, PackF16{}); }
std::vector<uint32_t> pack_bf16x2(const std::vector<FloatPair>& in) { return map_on_device<uint32_t>(in, PackBf16{}); }
std::vector<HalfDecodes> decode_halves(const std::vector<uint32_t>& words) {
  return map_on_device<HalfDecodes>(words, DecodeHalves{});
}
std::vector<WordPair> interleave_bytes(const std::vector<WordPair>& in) {
  return map_on_device<WordPair>(in, Interleave{});
}
std::vector<int> layout_offsets(Layout layout, int rows, int columns) {
  return map_on_device<int>(indices(rows * columns), LayoutOffset{layout, columns});
}
std::vector<int> fp8_p_columns(int tokens) { return map_on_device<int>(indices(tokens), PColumn{}); }

}  // namespace mlasim::kernels::probe
