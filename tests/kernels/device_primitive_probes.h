#pragma once
// Host entry points that evaluate the kernels' device primitives on the GPU, one result per input, for the device
// tests (device_primitives_test.cpp). The kernels behind them are in device_primitive_probes.cu; keeping them
// apart keeps GoogleTest out of the GPU compilation.
#include <cstdint>
#include <vector>

namespace mlasim::kernels::probe {

struct FloatPair {
  float lo, hi;
};
struct WordPair {
  uint32_t a, b;
};
struct HalfDecodes {
  float f16_lo, f16_hi, bf16_lo, bf16_hi;
};

std::vector<float> fp8_e4m3_to_float(const std::vector<uint32_t>& codes);    // dev::fp8_e4m3_to_float
std::vector<uint32_t> fp8x2_to_f16x2(const std::vector<uint32_t>& pairs);    // dev::fp8x2_to_f16x2
std::vector<uint32_t> pack_e4m3x2(const std::vector<FloatPair>& in);         // dev::pack_e4m3x2(lo, hi)
std::vector<uint32_t> pack_f16x2(const std::vector<FloatPair>& in);          // dev::pack_f16x2(lo, hi)
std::vector<uint32_t> pack_bf16x2(const std::vector<FloatPair>& in);         // dev::pack_bf16x2(lo, hi)
std::vector<HalfDecodes> decode_halves(const std::vector<uint32_t>& words);  // f16_lo/hi, bf16_lo/hi
// {interleave_bytes<false>(a, b), interleave_bytes<true>(a, b)}
std::vector<WordPair> interleave_bytes(const std::vector<WordPair>& in);

// The shared-memory layouts of smem_swizzle.cuh as the kernels instantiate them.
enum class Layout {
  swizzle128,      // swizzle128_offset(row, chunk 0..7)
  swizzle64,       // swizzle64_offset(row, chunk 0..3)
  core_matrix_1k,  // core_matrix_offset(row, chunk, 1024): P of the bf16 Hopper kernel
  bf16_stage,      // swizzle128_chunk_offset<8192>(row, chunk): Q and KV stages of the bf16 Hopper kernel
  fp16_p,          // swizzle128_half_offset<2048>(row, element): P of the fp8 Hopper kernel
  fp8_tile,        // fp8_operand_offset<64>(row, byte): a KV stage of the fp8 Hopper kernel
  fp8_q,           // fp8_operand_offset<32>(row, byte): Q's hi and lo rows of the fp8 Hopper kernel
};
// Offsets of (row, column) for rows x columns, row-major.
std::vector<int> layout_offsets(Layout layout, int rows, int columns);
std::vector<int> fp8_p_columns(int tokens);  // fp8_p_column(tau) for tau < tokens

}  // namespace mlasim::kernels::probe
