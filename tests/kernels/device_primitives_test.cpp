// Device tests of the kernels' primitives: the fp8 e4m3, fp16 and bf16 conversions and byte interleaves of
// device_primitives.cuh, and the shared-memory offsets of smem_swizzle.cuh and the fp8 P permutation. Small
// kernels (device_primitive_probes.cu) evaluate them on the GPU, with the instructions the decode kernels run;
// the host checks the results against exact references and the layouts' defining properties. Needs a GPU;
// skips visibly without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "device_primitive_probes.h"
#include "mlasim/kernels/mla_problem.h"
#include "mlasim/kernels/mla_runner.h"

namespace mlasim::kernels {
namespace {

using probe::FloatPair;

class DevicePrimitives : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU device found: the device tests run on a GPU machine (make gpu-test)";
  }
};

std::vector<uint32_t> words(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

bool is_e4m3_nan(uint32_t code) { return (code & 0x7fu) == 0x7fu; }

float f16_bits_to_float(uint32_t h) {
  const int e = static_cast<int>((h >> 10) & 31u), m = static_cast<int>(h & 1023u);
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(static_cast<float>(1024 + m), e - 25);
  return (h & 0x8000u) ? -v : v;
}

// IEEE fp16 bits of f, round to nearest even; from the rounding range of infinity on, infinity.
uint32_t float_to_f16_bits(float f) {
  const uint32_t sign = std::signbit(f) ? 0x8000u : 0u;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00u;
  if (a < std::ldexp(1.0, -14)) return sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(a, 24)));
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1): 11 significant bits are steps of 2^(e - 11)
  double q = std::nearbyint(std::ldexp(a, 11 - e));
  int biased = e - 1 + 15;
  if (q == 2048.0) q = 1024.0, ++biased;
  return sign | (static_cast<uint32_t>(biased) << 10) | (static_cast<uint32_t>(q) - 1024u);
}

// Values that probe a rounding: the given representable values, the midpoints between neighbours (exact ties
// where the two are adjacent in the format) and the floats just beside them, random floats over the range, and
// all of them negated.
std::vector<float> rounding_probes(std::vector<float> representable, float random_max, uint32_t seed) {
  std::sort(representable.begin(), representable.end());
  std::vector<float> v;
  for (size_t i = 0; i < representable.size(); ++i) {
    v.push_back(representable[i]);
    if (i + 1 == representable.size()) continue;
    const float mid = 0.5f * (representable[i] + representable[i + 1]);
    v.push_back(mid);
    v.push_back(std::nextafter(mid, 0.f));
    v.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-30.f, std::log2(random_max));
  for (int i = 0; i < 4096; ++i) v.push_back(std::exp2(exponent(rng)));
  const size_t positive = v.size();
  for (size_t i = 0; i < positive; ++i) v.push_back(-v[i]);
  return v;
}

// Pairs (v[i], v[j]) with j a permutation of i, so that both halves see every value.
std::vector<FloatPair> pairs_of(const std::vector<float>& v, size_t stride) {
  std::vector<FloatPair> in;
  for (size_t i = 0; i < v.size(); ++i) in.push_back({v[i], v[(i * stride + 1) % v.size()]});
  return in;
}

TEST_F(DevicePrimitives, Fp8E4m3ToFloatIsExactForEveryFiniteCode) {
  const std::vector<float> got = probe::fp8_e4m3_to_float(words(256));
  for (uint32_t code = 0; code < 256; ++code) {
    if (is_e4m3_nan(code)) continue;
    const float want = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    EXPECT_EQ(std::memcmp(&got[code], &want, 4), 0) << "code " << code << ": " << got[code] << " vs " << want;
  }
}

TEST_F(DevicePrimitives, Fp8PairsBecomeExactF16PairsLowByteFirst) {
  const std::vector<uint32_t> got = probe::fp8x2_to_f16x2(words(65536));
  int checked = 0;
  for (uint32_t pair = 0; pair < 65536; ++pair) {
    const uint32_t lo = pair & 0xffu, hi = pair >> 8;
    if (is_e4m3_nan(lo) || is_e4m3_nan(hi)) continue;
    ++checked;
    ASSERT_EQ(f16_bits_to_float(got[pair] & 0xffffu), fp8_e4m3_to_float(static_cast<uint8_t>(lo))) << "pair " << pair;
    ASSERT_EQ(f16_bits_to_float(got[pair] >> 16), fp8_e4m3_to_float(static_cast<uint8_t>(hi))) << "pair " << pair;
  }
  EXPECT_EQ(checked, 254 * 254);
}

TEST_F(DevicePrimitives, FloatsRoundToNearestEvenE4m3AndSaturateAt448) {
  std::vector<float> finite;
  for (int code = 0; code < 0x7f; ++code) finite.push_back(fp8_e4m3_to_float(static_cast<uint8_t>(code)));
  std::vector<float> probes = rounding_probes(finite, 600.f, 1);
  for (float beyond : {449.f, 464.f, 480.f, 1000.f, 1e30f}) probes.push_back(beyond), probes.push_back(-beyond);
  const std::vector<FloatPair> in = pairs_of(probes, 7);
  const std::vector<uint32_t> got = probe::pack_e4m3x2(in);
  for (size_t i = 0; i < in.size(); ++i) {
    // Compared as values: the host reference turns -0 into +0.
    const float lo = fp8_e4m3_to_float(static_cast<uint8_t>(got[i] & 0xffu));
    const float hi = fp8_e4m3_to_float(static_cast<uint8_t>((got[i] >> 8) & 0xffu));
    ASSERT_EQ(lo, fp8_e4m3_to_float(float_to_fp8_e4m3(in[i].lo))) << "x = " << in[i].lo;
    ASSERT_EQ(hi, fp8_e4m3_to_float(float_to_fp8_e4m3(in[i].hi))) << "x = " << in[i].hi;
    ASSERT_EQ(got[i] >> 16, 0u);
  }
}

TEST_F(DevicePrimitives, FloatsRoundToNearestEvenF16) {
  std::vector<float> representable;
  for (uint32_t h = 0; h + 1 < 0x7c00u; h += 7) {  // neighbours from every binade: their midpoints are ties
    representable.push_back(f16_bits_to_float(h));
    representable.push_back(f16_bits_to_float(h + 1));
  }
  std::vector<float> probes = rounding_probes(representable, 70000.f, 2);
  for (float beyond : {65504.f, 65519.f, 65520.f, 1e9f}) probes.push_back(beyond), probes.push_back(-beyond);
  const std::vector<FloatPair> in = pairs_of(probes, 5);
  const std::vector<uint32_t> got = probe::pack_f16x2(in);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(got[i] & 0xffffu, float_to_f16_bits(in[i].lo)) << "x = " << in[i].lo;
    ASSERT_EQ(got[i] >> 16, float_to_f16_bits(in[i].hi)) << "x = " << in[i].hi;
  }
}

TEST_F(DevicePrimitives, FloatsRoundToNearestEvenBf16) {
  std::vector<float> representable;
  for (uint32_t b = 0; b + 1 < 0x7f80u; b += 13) {
    representable.push_back(bf16_to_float(static_cast<uint16_t>(b)));
    representable.push_back(bf16_to_float(static_cast<uint16_t>(b + 1)));
  }
  const std::vector<FloatPair> in = pairs_of(rounding_probes(representable, 1e30f, 3), 3);
  const std::vector<uint32_t> got = probe::pack_bf16x2(in);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(got[i] & 0xffffu, float_to_bf16(in[i].lo)) << "x = " << in[i].lo;
    ASSERT_EQ(got[i] >> 16, float_to_bf16(in[i].hi)) << "x = " << in[i].hi;
  }
}

TEST_F(DevicePrimitives, F16AndBf16HalvesDecodeExactly) {
  std::vector<uint32_t> in;
  for (uint32_t h = 0; h < 65536; ++h) in.push_back(h | (h ^ 0x5a5au) << 16);  // different bits in the two halves
  const std::vector<probe::HalfDecodes> got = probe::decode_halves(in);
  auto finite_f16 = [](uint32_t h) { return ((h >> 10) & 31u) != 31u; };
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t lo = in[h] & 0xffffu, hi = in[h] >> 16;
    if (finite_f16(lo)) {
      ASSERT_EQ(got[h].f16_lo, f16_bits_to_float(lo)) << "fp16 bits " << lo;
    }
    if (finite_f16(hi)) {
      ASSERT_EQ(got[h].f16_hi, f16_bits_to_float(hi)) << "fp16 bits " << hi;
    }
    const float blo = bf16_to_float(static_cast<uint16_t>(lo)), bhi = bf16_to_float(static_cast<uint16_t>(hi));
    if (!std::isnan(blo)) {
      ASSERT_EQ(got[h].bf16_lo, blo) << "bf16 bits " << lo;
    }
    if (!std::isnan(bhi)) {
      ASSERT_EQ(got[h].bf16_hi, bhi) << "bf16 bits " << hi;
    }
  }
}

TEST_F(DevicePrimitives, InterleaveBytesAlternatesTheTwoWordsLowByteFirst) {
  std::mt19937 rng(4);
  std::vector<probe::WordPair> in{{0x03020100u, 0x13121110u}};
  for (int i = 0; i < 1000; ++i) in.push_back({static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())});
  const std::vector<probe::WordPair> got = probe::interleave_bytes(in);
  EXPECT_EQ(got[0].a, 0x11011000u);  // a0 b0 a1 b1
  EXPECT_EQ(got[0].b, 0x13031202u);  // a2 b2 a3 b3
  auto byte = [](uint32_t w, int i) { return (w >> (8 * i)) & 0xffu; };
  for (size_t i = 0; i < in.size(); ++i) {
    const uint32_t a = in[i].a, b = in[i].b;
    ASSERT_EQ(got[i].a, byte(a, 0) | byte(b, 0) << 8 | byte(a, 1) << 16 | byte(b, 1) << 24);
    ASSERT_EQ(got[i].b, byte(a, 2) | byte(b, 2) << 8 | byte(a, 3) << 16 | byte(b, 3) << 24);
  }
}

// Every unit of `unit` bytes in [0, total) is taken by exactly one (row, column).
void expect_bijection(const std::vector<int>& offsets, int unit, int total) {
  std::set<int> seen;
  for (int off : offsets) {
    ASSERT_EQ(off % unit, 0);
    ASSERT_GE(off, 0);
    ASSERT_LT(off, total);
    ASSERT_TRUE(seen.insert(off).second) << "offset " << off << " taken twice";
  }
  EXPECT_EQ(static_cast<int>(seen.size()) * unit, total);
}

// The PTX ISA's swizzles: 16-byte chunk c of row r at chunk c ^ (r % 8) of its 128-byte line, or at chunk
// c ^ ((r / 2) % 4) of its 64-byte half line.
int ptx_swizzle128(int r, int c) { return 128 * r + 16 * (c ^ (r % 8)); }
int ptx_swizzle64(int r, int c) { return 64 * r + 16 * (c ^ (r / 2 % 4)); }

TEST_F(DevicePrimitives, Swizzle128KeepsRowsInTheirLineAndSpreadsEachChunkOverTheBanks) {
  const std::vector<int> off = probe::layout_offsets(probe::Layout::swizzle128, 64, 8);
  expect_bijection(off, 16, 64 * 128);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 8; ++c) ASSERT_EQ(off[r * 8 + c], ptx_swizzle128(r, c));
  for (int atom = 0; atom < 8; ++atom)
    for (int c = 0; c < 8; ++c) {
      std::set<int> banks;  // chunk c of an atom's 8 rows lands on 8 different 16-byte bank groups
      for (int r = 8 * atom; r < 8 * atom + 8; ++r) banks.insert(off[r * 8 + c] % 128);
      EXPECT_EQ(banks.size(), 8u);
    }
}

TEST_F(DevicePrimitives, Swizzle64KeepsRowsInTheirHalfLineAndSpreadsEachChunkOverTheBanks) {
  const std::vector<int> off = probe::layout_offsets(probe::Layout::swizzle64, 64, 4);
  expect_bijection(off, 16, 64 * 64);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 4; ++c) ASSERT_EQ(off[r * 4 + c], ptx_swizzle64(r, c));
  for (int atom = 0; atom < 8; ++atom)
    for (int c = 0; c < 4; ++c) {
      std::set<int> banks;
      for (int r = 8 * atom; r < 8 * atom + 8; ++r) banks.insert(off[r * 4 + c] % 128);
      EXPECT_EQ(banks.size(), 8u);
    }
}

TEST_F(DevicePrimitives, CoreMatricesStoreEightRowsOfAChunkContiguously) {
  const std::vector<int> off = probe::layout_offsets(probe::Layout::core_matrix_1k, 64, 8);
  expect_bijection(off, 16, 8 * 1024);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 8; ++c) {
      ASSERT_EQ(off[r * 8 + c] / 1024, c);  // one 1 KB column per chunk
      ASSERT_EQ(off[r * 8 + c], off[(r & ~7) * 8 + c] + 16 * (r & 7));
    }
}

TEST_F(DevicePrimitives, Bf16StageColumnsHoldSixtyFourDimsOfEveryRow) {
  const std::vector<int> off = probe::layout_offsets(probe::Layout::bf16_stage, 64, 72);  // 64 rows x 576 dims
  expect_bijection(off, 16, 9 * 64 * 128);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 72; ++c) ASSERT_EQ(off[r * 72 + c], (c / 8) * 64 * 128 + ptx_swizzle128(r, c % 8));
}

TEST_F(DevicePrimitives, HalfOperandKeepsEightElementsInOneChunk) {
  const std::vector<int> off = probe::layout_offsets(probe::Layout::fp16_p, 16, 64);  // 16 rows x 64 fp16
  expect_bijection(off, 2, 16 * 128);
  for (int n = 0; n < 16; ++n)
    for (int k = 0; k < 64; ++k) ASSERT_EQ(off[n * 64 + k], ptx_swizzle128(n, k / 8) + 2 * (k % 8));
}

void expect_fp8_operand_layout(const std::vector<int>& off, int rows) {
  expect_bijection(off, 1, rows * 576);
  for (int r = 0; r < rows; ++r)
    for (int b = 0; b < 576; ++b) {
      const int want = b < 512 ? (b / 128) * rows * 128 + ptx_swizzle128(r, b / 16 % 8) + b % 16
                               : 4 * rows * 128 + ptx_swizzle64(r, (b - 512) / 16) + b % 16;
      ASSERT_EQ(off[r * 576 + b], want) << "row " << r << " byte " << b;
    }
}

TEST_F(DevicePrimitives, Fp8OperandIsFourSwizzledColumnsAndATail) {
  expect_fp8_operand_layout(probe::layout_offsets(probe::Layout::fp8_tile, 64, 576), 64);  // a KV stage
  expect_fp8_operand_layout(probe::layout_offsets(probe::Layout::fp8_q, 32, 576), 32);     // Q's hi and lo rows
}

TEST_F(DevicePrimitives, Fp8PColumnsFollowTheLanesTokens) {
  const std::vector<int> col = probe::fp8_p_columns(16);
  EXPECT_EQ(std::set<int>(col.begin(), col.end()).size(), 16u);  // a permutation of the 16-token block
  // Lane t holds tokens t, t+4, t+8, t+12: the fragment's k = 2t, 2t+1, 2t+8, 2t+9.
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(col[t], 2 * t);
    EXPECT_EQ(col[t + 4], 2 * t + 1);
    EXPECT_EQ(col[t + 8], 2 * t + 8);
    EXPECT_EQ(col[t + 12], 2 * t + 9);
  }
}

}  // namespace
}  // namespace mlasim::kernels
