#pragma once
// A workgroup's works with Hopper warpgroup MMAs for fp8 KV (sm_90a). A KV tile's 64 tokens are the MMAs' M and
// a pass's 16 packed rows their N, so no row is padded:
//   S^T (64 tokens x 32)  = K (64 x 576, fp8, shared) * [Qhi; Qlo]^T (fp8, shared)    18 wgmma m64n32k32 e4m3
//   O^T (512 dims x 16) += V^T (512 x 64 tokens) * P^T (fp16, shared)                  32 wgmma m64n16k16 f16
// QK^T runs on the fp8 tensor cores straight from the tile: each Q row r is split into two fp8 rows,
// hi = e4m3(q s_r) and lo = e4m3(16 (q s_r - hi)), with s_r a power of two that puts the row's largest element
// near e4m3's 448; hi + lo / 16 keeps 8 significant bits, as many as the bf16 input has, and S = (S_hi +
// S_lo / 16) / s_r. fp8 has no transposed wgmma operand and no fp8 x fp16 product, so for PV each thread reads
// its V bytes from the tile and converts them to fp16 pairs in the register fragment layout (exact, one
// instruction per pair); the dim order inside each 128-dim block of O^T is permuted so that a lane's four dims
// are adjacent bytes, and the output puts them back.
// Shared layouts: the K tile and Q are K-major in the 128-byte swizzle (four columns of 128 dims) plus a tail of
// the last 64 dims in the 64-byte swizzle, so a stage is exactly the tile's 36 KB; P is fp16, K-major, 128-byte
// swizzle.
// Roles: a producer warpgroup (which hands most of its registers to the others) streams every tile of the
// workgroup's works (each pass of each work, in order) through four shared stages with asynchronous copies whose
// completion lands on the stage's "full" mbarrier; two consumer warpgroups take every other tile of a pass, each
// with its own online softmax and accumulators, free a stage (its "empty" mbarrier) as soon as their last read
// of it is issued, and merge through shared memory at the end of the pass. The producer runs ahead across passes
// and works, so the copies never wait for a merge. Why this shape (measured on the H100, docs/kernels.md): the
// MMAs and conversions alone take 75% of the time the copies do, so they must overlap the copies almost fully;
// two stages per warpgroup, each refilled only after its tile's whole compute, left the copies idle. The code
// that runs once per pass (Q staging, the merge) is kept small, in rolled loops: when the L2 has been emptied,
// a kernel fetches it cold from memory at its start and end, and the unrolled form held the first tile back by
// several microseconds.
#include <cstdint>

#include "device_primitives.cuh"
#include "mla_decode_tile.cuh"
#include "mla_launch.h"
#include "mla_params.h"
#include "wgmma_primitives.cuh"

namespace mlasim::kernels {

struct WgmmaFp8Config {
  static constexpr int kRows = 16;        // packed rows per pass (the MMAs' N; QK^T's N is hi and lo: 32)
  static constexpr int kTile = 64;        // KV tokens per stage (the MMAs' M)
  static constexpr int kConsumers = 256;  // two consumer warpgroups
  static constexpr int kThreads = kConsumers + 128;  // and the producer warpgroup
  // Registers per thread: the launch gives every thread 168 (65536 / 384, rounded down to 8); the producer
  // warpgroup gives most of its share to the consumers. The split must add up exactly, or the consumers'
  // setmaxnreg.inc waits forever for registers nobody returns.
  static constexpr int kLaunchRegisters = 168;
  static constexpr int kProducerRegisters = 88, kConsumerRegisters = 208;
  static_assert(kProducerRegisters + 2 * kConsumerRegisters == 3 * kLaunchRegisters, "register split must balance");
  // Shared stages. Their number must be even: the two consumer warpgroups take alternate tiles of a pass, so with
  // an even count every use of a stage within a pass goes to the same warpgroup, which has waited for the
  // stage's previous use. With an odd count a warpgroup could wait for use u + 1 of a stage whose use u (the
  // other warpgroup's tile) has not landed yet; an mbarrier's parity wait cannot tell u + 1 from u - 1, so it
  // would pass at once, read a stage still being filled and release it early (3 stages failed at full speed
  // this way). Four measured 2-3% faster than five (docs/kernels.md).
  static constexpr int kStages = 4;
  static_assert(kStages % 2 == 0, "alternating consumers need an even stage count");
  static constexpr int kTileBytes = kTile * kQkDim;  // a stage: four 128-byte-swizzle columns and a 64-byte tail
  static constexpr int kColumn = kTile * 128;         // one column of 128 dims of the tile
  static constexpr int kTailOffset = 4 * kColumn;     // dims 512..575, 64 bytes a row
  static constexpr int kQColumn = 2 * kRows * 128;    // Q's column: hi rows 0..15, lo rows 16..31
  static constexpr int kQTailOffset = 4 * kQColumn;
  static constexpr int kQOffset = 0;
  static constexpr int kQBytes = kQTailOffset + 2 * kRows * 64;
  static constexpr int kAtom = kRows * 128;  // P: one 64-element fp16 column of 16 rows in the 128-byte swizzle
  static constexpr int kPOffset = kQOffset + kQBytes;  // P per consumer warpgroup: 16 rows x 64 tokens fp16
  static constexpr int kStageOffset = kPOffset + 2 * kAtom;
  static constexpr int kMergeOffset = kStageOffset + kStages * kTileBytes;  // 16 rows x 128 dims fp32 per round
  static constexpr int kMergeBytes = kRows * 128 * 4;
  static constexpr int kMaxOffset = kMergeOffset + kMergeBytes;  // per warpgroup and warp: 16 row maxima
  static constexpr int kSumOffset = kMaxOffset + 2 * 4 * kRows * 4;  // per warpgroup and warp: 16 row sums
  static constexpr int kMergeRowOffset = kSumOffset + 2 * 4 * kRows * 4;  // warpgroup 1's maxima and sums
  static constexpr int kQScaleOffset = kMergeRowOffset + 2 * kRows * 4;   // rows' 1 / s_r
  static constexpr int kSlotOffset = kQScaleOffset + kRows * 4;           // producer: two tables of 64 row slots
  static constexpr int kBarrierOffset = kSlotOffset + 2 * kTile * 4;     // full[kStages], empty[kStages]
  static constexpr int kSmemBytes = kBarrierOffset + 2 * kStages * 8;
  // Named barriers (0 is __syncthreads): one per consumer warpgroup, one for both, one for the producer.
  static constexpr int kConsumersBarrier = 3, kProducerBarrier = 4;
  static_assert(kPOffset % 1024 == 0 && kStageOffset % 1024 == 0 && kTileBytes % 1024 == 0,
                "swizzled operands need 1 KB alignment");
};

// Byte offset of element k of row n in a 16-row fp16 operand stored K-major in the 128-byte swizzle (P).
__device__ __forceinline__ int swizzled16_offset(int n, int k) {
  const int e = k & 63;
  return (k >> 6) * WgmmaFp8Config::kAtom + n * 128 + ((((e >> 3) ^ (n & 7))) << 4) + (e & 7) * 2;
}

// Byte offset of byte b (dim b) of row r in an fp8 K-major operand of `rows` rows: dims 0..511 in four columns
// of the 128-byte swizzle, dims 512..575 in a tail of the 64-byte swizzle.
template <int kRowsOfOperand>
__device__ __forceinline__ int fp8_operand_offset(int r, int b) {
  if (b < 512) {
    const int j = (b >> 4) & 7;
    return (b >> 7) * (kRowsOfOperand * 128) + r * 128 + ((j ^ (r & 7)) << 4) + (b & 15);
  }
  const int j = (b - 512) >> 4;
  return 4 * kRowsOfOperand * 128 + r * 64 + ((j ^ ((r >> 1) & 3)) << 4) + (b & 15);
}

#if defined(MLASIM_WGMMA)
// Passes of 16 packed rows over a work.
__device__ __forceinline__ int fp8_passes(const WorkSpan& s) {
  return ceil_div(s.packed_rows, WgmmaFp8Config::kRows);
}

// The tiles of works [first, last) in the order the consumers take them: each pass of each work, tile by tile.
struct Fp8TileCursor {
  int wi, last, pass = 0, passes = 0, i = 0;
  WorkSpan span{};
  __device__ __forceinline__ Fp8TileCursor(const DecodeParams& p, int first, int last_work)
      : wi(first), last(last_work) {
    settle(p);
  }
  __device__ __forceinline__ bool done() const { return wi >= last; }
  // Moves on to the first work at or after wi that has tiles.
  __device__ __forceinline__ void settle(const DecodeParams& p) {
    for (; wi < last; ++wi) {
      span = work_span<WgmmaFp8Config::kTile>(p, p.works[wi]);
      passes = fp8_passes(span);
      if (span.num_tiles > 0 && passes > 0) return;
    }
  }
  __device__ __forceinline__ void advance(const DecodeParams& p) {
    if (++i < span.num_tiles) return;
    i = 0;
    if (++pass < passes) return;
    pass = 0;
    ++wi;
    settle(p);
  }
  // True when every token of the current tile is in the work's range.
  __device__ __forceinline__ bool whole() const {
    return span.tok_begin + (i + 1) * WgmmaFp8Config::kTile <= span.tok_end;
  }
  // The slot of token row `row` of the current tile; rows past the range read slot 0 (finite data that the
  // masked weights multiply by zero), so every tile brings the same bytes.
  __device__ __forceinline__ int64_t slot(const DecodeParams& p, int row) const {
    const int tok = span.tok_begin + i * WgmmaFp8Config::kTile + row;
    if (tok >= span.tok_end) return 0;
    return static_cast<int64_t>(p.kv_indices[span.page_begin + tok / p.page_size]) * p.page_size + tok % p.page_size;
  }
};

// The producer warpgroup: the q-th tile goes to stage q % kStages, in the swizzled layout above, once the
// consumers freed it. A whole tile on pages of 16 or more tokens is copied by the tensor memory accelerator,
// one box per page and column (five per 64-token page); other tiles by 16-byte asynchronous copies in which
// consecutive threads take consecutive chunks of the tile's bytes across row boundaries (each warp instruction
// reads whole aligned 128-byte lines where pages allow). Either way the stage's "full" mbarrier completes when
// the bytes have landed. Threads 0..63 load the page-table entry of their row kAhead tiles ahead into a register
// ring (loaded right before use, its latency under full memory load would stall every tile) and publish it in a
// shared table for the tile being issued. Measured on the H100 (docs/kernels.md): tensor copies streamed the
// long works of batch 64 x 16384 at 2.34 TB/s where the 16-byte copies reached 1.86.
__device__ void produce_fp8_tiles(const DecodeParams& p, const Fp8TensorMaps& maps, int first, int last,
                                  unsigned char* smem) {
  using C = WgmmaFp8Config;
  constexpr int kAhead = 3, kChunksPerRow = kQkDim / 16;
  const int u = static_cast<int>(threadIdx.x) - C::kConsumers;
  unsigned char* stages = smem + C::kStageOffset;
  int* tables = reinterpret_cast<int*>(smem + C::kSlotOffset);
  auto* full = reinterpret_cast<uint64_t*>(smem + C::kBarrierOffset);
  uint64_t* empty = full + C::kStages;
  Fp8TileCursor ahead(p, first, last);
  int slot[kAhead];
  bool valid[kAhead], whole[kAhead];
#pragma unroll
  for (int d = 0; d < kAhead; ++d) {
    valid[d] = !ahead.done();
    if (valid[d]) {
      if (u < C::kTile) slot[d] = static_cast<int>(ahead.slot(p, u));
      whole[d] = ahead.whole();
      ahead.advance(p);
    }
  }
  for (uint32_t q = 0;;) {
#pragma unroll
    for (int d = 0; d < kAhead; ++d, ++q) {
      if (!valid[d]) return;
      const int s = static_cast<int>(q % C::kStages);
      const uint32_t use = q / C::kStages;
      int* table = tables + (q & 1) * C::kTile;
      if (u < C::kTile) table[u] = slot[d];
      if (use > 0) wg::mbarrier_wait(&empty[s], (use - 1) & 1);
      wg::named_sync(C::kProducerBarrier, 128);
      unsigned char* stage = stages + s * C::kTileBytes;
      if (whole[d] && maps.box_rows > 0) {
        // A whole tile on pages of 16 or more tokens: thread 0 copies it as tensor boxes, page by page, each
        // landing in the swizzle the MMAs read; the others only arrive.
        if (u == 0) {
          wg::mbarrier_arrive_expect_tx(&full[s], C::kTileBytes);
          for (int r0 = 0; r0 < C::kTile; r0 += maps.box_rows) {
            const int y = table[r0];
#pragma unroll
            for (int a = 0; a < 4; ++a)
              wg::tensor_copy_2d(stage + a * C::kColumn + r0 * 128, maps.columns, 128 * a, y, &full[s]);
            wg::tensor_copy_2d(stage + C::kTailOffset + r0 * 64, maps.tail, 512, y, &full[s]);
          }
        } else {
          wg::mbarrier_arrive(&full[s]);
        }
      } else {
        // Otherwise (pages of one token, the last tile of a range) 16-byte copies; the chunk offsets below are
        // the same every tile, and recomputing them is cheaper than the 36 registers the compiler would
        // otherwise keep them in (the producer runs on few registers).
        int uu = u;
        asm volatile("" : "+r"(uu));
#pragma unroll
        for (int k = 0; k < C::kTile * kChunksPerRow / 128; ++k) {
          const int c = uu + 128 * k, row = c / kChunksPerRow, ch = c % kChunksPerRow;
          dev::copy_async_16(stage + fp8_operand_offset<C::kTile>(row, 16 * ch),
                             p.kv + static_cast<int64_t>(table[row]) * kQkDim + 16 * ch, true);
        }
        wg::arrive_when_copies_land(&full[s]);
      }
      valid[d] = !ahead.done();
      if (valid[d]) {
        if (u < C::kTile) slot[d] = static_cast<int>(ahead.slot(p, u));
        whole[d] = ahead.whole();
        ahead.advance(p);
      }
    }
  }
}

// Q rows m0 .. m0+15 of the work as fp8 hi (rows 0..15) and lo (rows 16..31) parts in the K tile's layout, and
// each row's 1 / s_r (the 256 consumer threads, once per pass; warp w takes rows 2w and 2w + 1). The conversion
// loop stays rolled (its second reads of Q hit the L1): at a kernel's start this code comes cold from memory, and
// the unrolled version took ~10 us from the pass's start to Q staged, the rolled one 4-8 (H100, docs/kernels.md).
__device__ __forceinline__ void stage_q_fp8(unsigned char* qs, float* q_inv_scale, const DecodeParams& p,
                                            const WorkRow& w, int m0, int packed_rows) {
  using C = WgmmaFp8Config;
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int H = p.heads;
  const uint32_t* rows[2];
  float scale[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int pr = m0 + 2 * warp + rr;
    rows[rr] = pr < packed_rows ? reinterpret_cast<const uint32_t*>(
                                      p.q + (static_cast<int64_t>(w.qo_start + pr / H) * H + pr % H) * kQkDim)
                                : nullptr;
    float amax = 0.f;  // over the lane's bf16 pairs: dims 2 (lane + 32 m)
#pragma unroll
    for (int m = 0; m < kQkDim / 64; ++m) {
      const uint32_t v = rows[rr] ? rows[rr][lane + 32 * m] : 0u;
      amax = fmaxf(amax, fmaxf(fabsf(dev::bf16_lo(v)), fabsf(dev::bf16_hi(v))));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, dev::shfl_xor(amax, o));
    // s_r = 2^e with amax s_r in (224, 448]: exact scaling, and hi stays finite.
    scale[rr] = amax > 0.f ? exp2f(floorf(log2f(448.f / amax))) : 1.f;
    if (lane == 0) q_inv_scale[2 * warp + rr] = 1.f / scale[rr];
  }
#pragma unroll 1
  for (int k = 0; k < 2 * (kQkDim / 64); ++k) {
    const int rr = k & 1, m = k >> 1, n = 2 * warp + rr;
    const uint32_t* row = rr ? rows[1] : rows[0];  // selects, not an indexed (local-memory) array
    const float sc = rr ? scale[1] : scale[0];
    const uint32_t v = row ? row[lane + 32 * m] : 0u;
    const float x0 = dev::bf16_lo(v) * sc, x1 = dev::bf16_hi(v) * sc;
    const uint32_t hi = dev::pack_e4m3x2(x0, x1);
    const float r0 = x0 - dev::fp8_e4m3_to_float(hi & 0xffu), r1 = x1 - dev::fp8_e4m3_to_float(hi >> 8);
    const uint32_t lo = dev::pack_e4m3x2(16.f * r0, 16.f * r1);
    const int d = 2 * (lane + 32 * m);
    *reinterpret_cast<uint16_t*>(qs + fp8_operand_offset<2 * C::kRows>(n, d)) = static_cast<uint16_t>(hi);
    *reinterpret_cast<uint16_t*>(qs + fp8_operand_offset<2 * C::kRows>(n + C::kRows, d)) =
        static_cast<uint16_t>(lo);
  }
}

// V^T fragments of one 16-token k step (tokens k0 .. k0+15) for the two 64-dim blocks of pair pp: the lane's
// four dims d..d+3 (d = 128 pp + 32 warp + 4g) at tokens k0 + 2t, 2t+1, 2t+8, 2t+9 (the fragment's own k
// order). Block X's rows g, g+8 are dims d, d+1; block Y's d+2, d+3. In the swizzled tile those tokens put the
// eight lanes of one token row on eight distinct 16-byte chunks: the loads are conflict-free.
__device__ __forceinline__ void v_fragments(uint32_t* ax, uint32_t* ay, const unsigned char* tile, int k0, int pp,
                                            int warp, int g, int t) {
  uint32_t wd[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int tok = k0 + 2 * t + (i & 1) + 8 * (i >> 1);
    const int j = 2 * warp + (g >> 2);
    wd[i] = *reinterpret_cast<const uint32_t*>(tile + pp * WgmmaFp8Config::kColumn + tok * 128 +
                                               ((j ^ (tok & 7)) << 4) + 4 * (g & 3));
  }
  const uint32_t lo01 = dev::interleave_bytes<false>(wd[0], wd[1]), hi01 = dev::interleave_bytes<true>(wd[0], wd[1]);
  const uint32_t lo23 = dev::interleave_bytes<false>(wd[2], wd[3]), hi23 = dev::interleave_bytes<true>(wd[2], wd[3]);
  ax[0] = dev::fp8x2_to_f16x2(lo01);
  ax[1] = dev::fp8x2_to_f16x2(lo01 >> 16);
  ax[2] = dev::fp8x2_to_f16x2(lo23);
  ax[3] = dev::fp8x2_to_f16x2(lo23 >> 16);
  ay[0] = dev::fp8x2_to_f16x2(hi01);
  ay[1] = dev::fp8x2_to_f16x2(hi01 >> 16);
  ay[2] = dev::fp8x2_to_f16x2(hi23);
  ay[3] = dev::fp8x2_to_f16x2(hi23 >> 16);
}

// One pass of a work on the consumer warpgroups: rows m0 .. m0+15 against the work's tiles q0, q0+1, ... of the
// producer's sequence.
__device__ void consume_fp8_pass(const DecodeParams& p, const WorkRow& w, const WorkSpan& span, int m0, uint32_t q0,
                                 unsigned char* smem) {
  using C = WgmmaFp8Config;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = (tid >> 5) & 3;
  const int grp = tid >> 7, g = lane >> 2, t = lane & 3;
  const int bar = 1 + grp;  // the warpgroup's named barrier
  unsigned char* qs = smem + C::kQOffset;
  unsigned char* ps = smem + C::kPOffset + grp * C::kAtom;
  const unsigned char* stages = smem + C::kStageOffset;
  float* xmax = reinterpret_cast<float*>(smem + C::kMaxOffset) + grp * 4 * C::kRows;
  float* xsum = reinterpret_cast<float*>(smem + C::kSumOffset) + grp * 4 * C::kRows;
  float* xo = reinterpret_cast<float*>(smem + C::kMergeOffset);
  float* merge_m = reinterpret_cast<float*>(smem + C::kMergeRowOffset);
  float* merge_l = merge_m + C::kRows;
  float* q_inv_scale = reinterpret_cast<float*>(smem + C::kQScaleOffset);
  auto* full = reinterpret_cast<uint64_t*>(smem + C::kBarrierOffset);
  uint64_t* empty = full + C::kStages;
  const float kNegInf = -__int_as_float(0x7f800000);
  const int H = p.heads, packed_rows = span.packed_rows, tok_end = span.tok_end;
  const uint64_t pdesc = wg::smem_desc(ps, 16, 1024, true);
  const uint64_t qdesc = wg::smem_desc(qs, 16, 1024, true);
  const uint64_t qtail = wg::smem_desc_swizzle64(qs + C::kQTailOffset, 512);
  // The lane's rows of the pass (accumulator columns): row_of(r) = 8 (r/2) + 2t + r%2, r = 0..3.
  auto row_of = [&](int r) { return 8 * (r >> 1) + 2 * t + (r & 1); };

  stage_q_fp8(qs, q_inv_scale, p, w, m0, packed_rows);
  wg::fence_shared_for_async();
  wg::named_sync(C::kConsumersBarrier, C::kConsumers);
  // Score scale per row (the softmax scale, log2 e, the KV scale and Q's 1 / s_r), applied inside the exponent.
  float scale[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) scale[r] = p.score_scale_log2 * q_inv_scale[row_of(r)];

  int limit[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int pr = min(m0 + row_of(r), packed_rows - 1);
    const int i = w.qo_start + pr / H - span.q_begin;  // query token of the request; it sees [0, kv_len - qlen + i]
    limit[r] = p.causal ? span.kv_len - span.qlen + i : span.kv_len - 1;
  }
  const int min_limit = min(min(limit[0], limit[1]), min(limit[2], limit[3]));
  // o[b][4j + 2h + e]: dim 128 (b/2) + 32 warp + 4g + 2 (b%2) + h of row 8j + 2t + e.
  float o[8][8];
#pragma unroll
  for (int b = 0; b < 8; ++b)
#pragma unroll
    for (int i = 0; i < 8; ++i) o[b][i] = 0.f;
  float m_run[4] = {kNegInf, kNegInf, kNegInf, kNegInf}, l_run[4] = {0.f, 0.f, 0.f, 0.f};

  for (int i = grp; i < span.num_tiles; i += 2) {
    const uint32_t q = q0 + i;
    const int s_idx = static_cast<int>(q % C::kStages);
    wg::mbarrier_wait(&full[s_idx], (q / C::kStages) & 1);
    const unsigned char* kt = stages + s_idx * C::kTileBytes;

    // S^T = K [Qhi; Qlo]^T on the fp8 tensor cores, both operands in shared memory: 16 k steps over the four
    // 128-dim columns and 2 over the 64-dim tail, even and odd steps in separate sums (two dependency chains).
    float s[8];
    {
      float acc[2][16];
      // Descriptors are a base plus an add each; Q's bases are re-read per tile so that the compiler does not
      // keep 36 precomputed descriptors alive across the loop (it spilled them).
      uint64_t qd = qdesc, qt = qtail;
      asm volatile("" : "+l"(qd), "+l"(qt));
      const uint64_t kd = wg::smem_desc(kt, 16, 1024, true);
      const uint64_t ktl = wg::smem_desc_swizzle64(kt + C::kTailOffset, 512);
      wg::fence();
#pragma unroll
      for (int ks = 0; ks < kQkDim / 32; ++ks) {
        const uint64_t a = ks < 16 ? wg::desc_advance(kd, (ks >> 2) * C::kColumn + (ks & 3) * 32)
                                   : wg::desc_advance(ktl, (ks - 16) * 32);
        const uint64_t b = ks < 16 ? wg::desc_advance(qd, (ks >> 2) * C::kQColumn + (ks & 3) * 32)
                                   : wg::desc_advance(qt, (ks - 16) * 32);
        wg::mma_m64n32k32_e4m3(acc[ks & 1], a, b, ks > 1);
      }
      wg::commit();
      wg::wait<0>();
      wg::pin(acc[0]);
      wg::pin(acc[1]);
      // acc[.][4j + 2h + e]: token 16 warp + g + 8h, column 8j + 2t + e; columns 16.. are the lo rows.
#pragma unroll
      for (int k = 0; k < 8; ++k) s[k] = (acc[0][k] + acc[1][k]) + 0.0625f * (acc[0][k + 8] + acc[1][k + 8]);
    }

    // Mask and row maxima. s[k]: token 16 warp + g + 8 (k/2 % 2) of the tile, row row_of(2 (k/4) + k%2).
    const int tok0 = span.tok_begin + i * C::kTile;
    float mx[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
    if (tok0 + C::kTile <= tok_end && tok0 + C::kTile - 1 <= min_limit) {
#pragma unroll
      for (int k = 0; k < 8; ++k) mx[2 * (k >> 2) + (k & 1)] = fmaxf(mx[2 * (k >> 2) + (k & 1)], s[k]);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const int r = 2 * (k >> 2) + (k & 1);
        const int tok = tok0 + 16 * warp + g + 8 * ((k >> 1) & 1);
        s[k] = tok < tok_end && tok <= limit[r] ? s[k] : kNegInf;
        mx[r] = fmaxf(mx[r], s[k]);
      }
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 4));
      mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 8));
      mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 16));
    }
    if (g == 0) {
#pragma unroll
      for (int r = 0; r < 4; ++r) xmax[warp * C::kRows + row_of(r)] = mx[r];
    }
    wg::named_sync(bar, 128);
    float alpha[4], nbase[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int n = row_of(r);
      const float m =
          fmaxf(fmaxf(xmax[n], xmax[C::kRows + n]), fmaxf(xmax[2 * C::kRows + n], xmax[3 * C::kRows + n]));
      const float m_new = fmaxf(m_run[r], m * scale[r]);
      const float base = m_new == kNegInf ? 0.f : m_new;  // a row with nothing visible yet keeps zero weight
      alpha[r] = dev::exp2_fast(m_run[r] - base);
      nbase[r] = -base;
      m_run[r] = m_new;
    }
    // Weights to P (fp16; column = token).
    float rs[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int r = 2 * (k >> 2) + (k & 1), h = (k >> 1) & 1;
      const float pw = dev::exp2_fast(fmaf(s[k], scale[r], nbase[r]));
      rs[r] += pw;
      const int col = 16 * warp + g + 8 * h;
      *reinterpret_cast<uint16_t*>(ps + swizzled16_offset(row_of(r), col)) =
          static_cast<uint16_t>(dev::pack_f16x2(pw, 0.f) & 0xffffu);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) l_run[r] = l_run[r] * alpha[r] + rs[r];
    if (alpha[0] != 1.f || alpha[1] != 1.f || alpha[2] != 1.f || alpha[3] != 1.f) {
#pragma unroll
      for (int b = 0; b < 8; ++b)
#pragma unroll
        for (int k = 0; k < 8; ++k) o[b][k] *= alpha[2 * (k >> 2) + (k & 1)];
    }
    wg::fence_shared_for_async();
    wg::named_sync(bar, 128);  // P complete; everyone has read the maxima

    // O^T += V^T P^T in four k steps over the eight 64-dim blocks; each converted while the previous step
    // multiplies.
    {
      uint32_t v[2][32];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        uint32_t(&buf)[32] = v[kk & 1];
        if (kk >= 2) {
          wg::wait<1>();
          wg::pin(buf);
        }
#pragma unroll
        for (int pp = 0; pp < 4; ++pp) v_fragments(buf + 8 * pp, buf + 8 * pp + 4, kt, 16 * kk, pp, warp, g, t);
        if (kk == 3) wg::mbarrier_arrive(&empty[s_idx]);  // this thread's last read of the stage is done
        wg::fence();
#pragma unroll
        for (int b = 0; b < 8; ++b) {
          const uint32_t(&frag)[4] = *reinterpret_cast<const uint32_t(*)[4]>(buf + 4 * b);
          wg::mma_m64n16k16_f16_ra(o[b], frag, wg::desc_advance(pdesc, kk * 32), 1);
        }
        wg::commit();
      }
      wg::wait<0>();
      wg::pin(v[0]);
      wg::pin(v[1]);
#pragma unroll
      for (int b = 0; b < 8; ++b) wg::pin(o[b]);
    }
  }

  // Row sums of each warpgroup; warpgroup 1 hands its maxima, sums and accumulators (128 dims per round) to
  // warpgroup 0, which writes the output.
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    l_run[r] += dev::shfl_xor(l_run[r], 4);
    l_run[r] += dev::shfl_xor(l_run[r], 8);
    l_run[r] += dev::shfl_xor(l_run[r], 16);
  }
  if (g == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) xsum[warp * C::kRows + row_of(r)] = l_run[r];
  }
  wg::named_sync(bar, 128);
  float l_grp[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int n = row_of(r);
    l_grp[r] = xsum[n] + xsum[C::kRows + n] + xsum[2 * C::kRows + n] + xsum[3 * C::kRows + n];
  }
  if (grp == 1 && warp == 0 && g == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      merge_m[row_of(r)] = m_run[r];
      merge_l[row_of(r)] = l_grp[r];
    }
  }
  wg::named_sync(C::kConsumersBarrier, C::kConsumers);  // warpgroup 1's maxima and sums are out
  // Each row's weights for the two halves (1 / l folded in) and, for a split work, its LSE.
  float c0[4], c1[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int n = row_of(r), pr = m0 + n;
    const float m1 = merge_m[n], mm = fmaxf(m_run[r], m1);
    const float base = mm == kNegInf ? 0.f : mm;
    const float f0 = dev::exp2_fast(m_run[r] - base), f1 = dev::exp2_fast(m1 - base);
    const float l = l_grp[r] * f0 + merge_l[n] * f1;
    const float inv = l > 0.f ? p.out_scale / l : 0.f;
    c0[r] = f0 * inv;
    c1[r] = f1 * inv;
    if (grp == 0 && w.partial_qo_loc >= 0 && warp == 0 && g == 0 && pr < packed_rows)
      p.partial_lse[(w.partial_qo_loc + pr / H) * H + pr % H] =
          l > 0.f ? (mm + log2f(l)) * 0.6931471805599453f : kNegInf;
  }
  // Four rounds of 128 dims. The loop stays rolled, each round taking o[0] and o[1] and then shifting the
  // accumulators down by two: this runs once per pass, and at a kernel's end its code comes cold from memory.
#pragma unroll 1
  for (int pp = 0; pp < 4; ++pp) {
    if (grp == 1) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int k0 = 4 * (r >> 1) + (r & 1);
        *reinterpret_cast<float4*>(xo + row_of(r) * 128 + 32 * warp + 4 * g) =
            make_float4(o[0][k0], o[0][k0 + 2], o[1][k0], o[1][k0 + 2]);
      }
    }
    wg::named_sync(C::kConsumersBarrier, C::kConsumers);
    if (grp == 0) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int n = row_of(r), pr = m0 + n, k0 = 4 * (r >> 1) + (r & 1);
        if (pr >= packed_rows) continue;
        const int64_t qrow = pr / H, head = pr % H;
        const int d = 128 * pp + 32 * warp + 4 * g;
        const float4 x = *reinterpret_cast<const float4*>(xo + n * 128 + 32 * warp + 4 * g);
        const float y0 = o[0][k0] * c0[r] + x.x * c1[r], y1 = o[0][k0 + 2] * c0[r] + x.y * c1[r];
        const float y2 = o[1][k0] * c0[r] + x.z * c1[r], y3 = o[1][k0 + 2] * c0[r] + x.w * c1[r];
        if (w.partial_qo_loc < 0) {
          uint16_t* dst = p.out + ((w.qo_start + qrow) * H + head) * kVDim + d;
          *reinterpret_cast<uint2*>(dst) = make_uint2(dev::pack_bf16x2(y0, y1), dev::pack_bf16x2(y2, y3));
        } else {
          float* dst = p.partial_out + ((w.partial_qo_loc + qrow) * H + head) * kVDim + d;
          *reinterpret_cast<float4*>(dst) = make_float4(y0, y1, y2, y3);
        }
      }
    }
    wg::named_sync(C::kConsumersBarrier, C::kConsumers);  // the round's exchange (and, last, Q) is free again
#pragma unroll
    for (int b = 0; b < 6; ++b)
#pragma unroll
      for (int k = 0; k < 8; ++k) o[b][k] = o[b + 2][k];
  }
}
#endif

// Works [first, last) on one workgroup: mbarriers, then the producer warpgroup and the two consumer warpgroups.
__device__ void run_works_wgmma_fp8(const DecodeParams& p, const Fp8TensorMaps& maps, int first, int last,
                                   unsigned char* smem) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaFp8Config;
  auto* full = reinterpret_cast<uint64_t*>(smem + C::kBarrierOffset);
  if (threadIdx.x == 0) {
    for (int i = 0; i < C::kStages; ++i) {
      wg::mbarrier_init(&full[i], 128);  // full: every producer thread, when its copies land
      wg::mbarrier_init(&full[C::kStages + i], 128);  // empty: every thread of the consuming warpgroup
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x >= C::kConsumers) {
    wg::setmaxnreg_dec<C::kProducerRegisters>();
    produce_fp8_tiles(p, maps, first, last, smem);
    return;
  }
  wg::setmaxnreg_inc<C::kConsumerRegisters>();
  uint32_t q0 = 0;
  for (int wi = first; wi < last; ++wi) {
    const WorkRow& w = p.works[wi];
    const WorkSpan span = work_span<C::kTile>(p, w);
    for (int pass = 0; pass < fp8_passes(span); ++pass, q0 += span.num_tiles)
      consume_fp8_pass(p, w, span, pass * C::kRows, q0, smem);
  }
#else
  (void)p, (void)maps, (void)first, (void)last, (void)smem;
#endif
}

}  // namespace mlasim::kernels
