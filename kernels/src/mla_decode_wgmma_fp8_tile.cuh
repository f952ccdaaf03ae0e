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
// Shared layouts (WgmmaFp8Smem): the K tile and Q are K-major in the 128-byte swizzle (four columns of 128 dims)
// plus a tail of the last 64 dims in the 64-byte swizzle, so a stage is exactly the tile's 36 KB; P is fp16,
// K-major, 128-byte swizzle.
// Roles: a producer warpgroup (which hands most of its registers to the others) streams every tile of the
// workgroup's works (each pass of each work, in order) through four shared stages with asynchronous copies whose
// completion lands on the stage's "full" mbarrier; two consumer warpgroups take every other tile of a pass, each
// with its own online softmax and accumulators, free a stage (its "empty" mbarrier) as soon as their last read
// of it is issued, and merge through shared memory at the end of the pass. The producer runs ahead across passes
// and works, so the copies never wait for a merge: the MMAs and conversions alone take most of the copies' time,
// so the two must overlap almost fully. Code that runs once per pass (stage_q, merge_and_store) stays small, in
// rolled loops: after an L2 flush a kernel fetches it cold from memory (docs/kernels.md has the measurements).
// Phases of a consumer pass: stage_q, then per tile qk_scores, softmax_step and pv_accumulate; at the end
// merge_row_states and merge_and_store.
#include <cstdint>

#include "accum_fragment.cuh"
#include "device_primitives.cuh"
#include "mla_launch.h"
#include "mla_output.cuh"
#include "mla_params.h"
#include "mla_work.cuh"
#include "online_softmax.cuh"
#include "smem_swizzle.cuh"
#include "wgmma_primitives.cuh"
#include "work_stamps.cuh"

namespace mlasim::kernels {

struct WgmmaFp8Config {
  static constexpr int kRows = 16;                   // packed rows per pass (the MMAs' N; QK^T's N is hi and lo: 32)
  static constexpr int kTile = 64;                   // KV tokens per stage (the MMAs' M)
  static constexpr int kConsumers = 256;             // two consumer warpgroups
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
  // would pass at once, read a stage still being filled and release it early (docs/kernels.md).
  static constexpr int kStages = 4;
  static_assert(kStages % 2 == 0, "alternating consumers need an even stage count");
  // Named barriers (0 is __syncthreads): one per consumer warpgroup (1 + warpgroup), one for both, one for the
  // producer.
  static constexpr int kConsumersBarrier = 3, kProducerBarrier = 4;
};

// Shared memory of the fp8 Hopper kernel, and where each part starts.
struct WgmmaFp8Smem {
  using C = WgmmaFp8Config;
  // Q: hi rows 0..15 and lo rows 16..31 in the fp8 operand layout (fp8_operand_offset<32>).
  static constexpr int kQOffset = 0;
  static constexpr int kQColumnBytes = 2 * C::kRows * 128;  // one 128-dim column of the 32 rows
  static constexpr int kQTailOffset = kQOffset + 4 * kQColumnBytes;
  static constexpr int kQBytes = 4 * kQColumnBytes + 2 * C::kRows * 64;
  // P per consumer warpgroup: 16 rows x 64 tokens fp16, one 128-byte swizzled column.
  static constexpr int kPOffset = kQOffset + kQBytes;
  static constexpr int kPBytes = C::kRows * 128;
  // KV stages: a tile of 64 tokens in the fp8 operand layout (fp8_operand_offset<64>), exactly 64 x 576 bytes.
  static constexpr int kStageOffset = kPOffset + 2 * kPBytes;
  static constexpr int kStageColumnBytes = C::kTile * 128;        // one 128-dim column of the tile
  static constexpr int kStageTailOffset = 4 * kStageColumnBytes;  // dims 512..575, 64 bytes a row
  static constexpr int kStageBytes = C::kTile * kQkDim;
  // The end-of-pass merge: warpgroup 1's accumulators of 128 dims per round (16 rows x 128 fp32).
  static constexpr int kMergeOffset = kStageOffset + C::kStages * kStageBytes;
  static constexpr int kMergeBytes = C::kRows * 128 * 4;
  // Per consumer warpgroup and warp: each warp's maxima of the 16 rows, then likewise its sums.
  static constexpr int kMaxOffset = kMergeOffset + kMergeBytes;
  static constexpr int kMaxBytes = 2 * 4 * C::kRows * 4;
  static constexpr int kSumOffset = kMaxOffset + kMaxBytes;
  static constexpr int kSumBytes = 2 * 4 * C::kRows * 4;
  // Warpgroup 1's row maxima and sums for the merge.
  static constexpr int kMergeRowOffset = kSumOffset + kSumBytes;
  static constexpr int kMergeRowBytes = 2 * C::kRows * 4;
  static constexpr int kQScaleOffset = kMergeRowOffset + kMergeRowBytes;  // rows' 1 / s_r
  static constexpr int kQScaleBytes = C::kRows * 4;
  // The producer's two tables of the 64 row slots of the tile it issues.
  static constexpr int kSlotOffset = kQScaleOffset + kQScaleBytes;
  static constexpr int kSlotBytes = 2 * C::kTile * 4;
  static constexpr int kBarrierOffset = kSlotOffset + kSlotBytes;  // full[kStages], then empty[kStages]
  static constexpr int kBytes = kBarrierOffset + 2 * C::kStages * 8;
  static_assert(kPOffset % 1024 == 0 && kStageOffset % 1024 == 0 && kStageBytes % 1024 == 0,
                "swizzled operands need 1 KB alignment");

  unsigned char* base;
  __device__ __forceinline__ unsigned char* q() const { return base + kQOffset; }
  __device__ __forceinline__ unsigned char* p(int grp) const { return base + kPOffset + grp * kPBytes; }
  __device__ __forceinline__ unsigned char* stage(int s) const { return base + kStageOffset + s * kStageBytes; }
  __device__ __forceinline__ float* merge_values() const { return reinterpret_cast<float*>(base + kMergeOffset); }
  __device__ __forceinline__ float* warp_max(int grp) const {
    return reinterpret_cast<float*>(base + kMaxOffset) + grp * 4 * C::kRows;
  }
  __device__ __forceinline__ float* warp_sum(int grp) const {
    return reinterpret_cast<float*>(base + kSumOffset) + grp * 4 * C::kRows;
  }
  __device__ __forceinline__ float* merge_max() const { return reinterpret_cast<float*>(base + kMergeRowOffset); }
  __device__ __forceinline__ float* merge_sum() const { return merge_max() + C::kRows; }
  __device__ __forceinline__ float* q_inv_scale() const { return reinterpret_cast<float*>(base + kQScaleOffset); }
  __device__ __forceinline__ int* slot_table(uint32_t q) const {
    return reinterpret_cast<int*>(base + kSlotOffset) + (q & 1) * C::kTile;
  }
  __device__ __forceinline__ uint64_t* full() const { return reinterpret_cast<uint64_t*>(base + kBarrierOffset); }
  __device__ __forceinline__ uint64_t* empty() const { return full() + C::kStages; }
};

// Byte offset of element k of row n of P (16 rows, fp16, K-major, 128-byte swizzle).
__device__ __forceinline__ int swizzled16_offset(int n, int k) {
  return swizzle128_half_offset<WgmmaFp8Smem::kPBytes>(n, k);
}

// Accumulators of a consumer thread. The lane's four packed rows of the pass are the accumulators' columns:
// row r (0..3) is column fp8_lane_row(r, t), held in registers index(r / 2, h, r % 2) of each fragment.
//   S^T: rows = the tile's tokens, 16 warp + g + 8h;
//   O^T: eight fragments, one per 64-dim block b; rows = value dims fp8_out_dim(b, h, warp, g).
using Fp8ScoreAccum = AccumFragment<8>;  // hi + lo / 16 of the two QK^T chains
using Fp8QkAccum = AccumFragment<16>;    // one chain: columns 0..15 the hi rows, 16..31 the lo rows
using Fp8OutAccum = AccumFragment<8>;

__device__ __forceinline__ int fp8_lane_row(int r, int t) { return 8 * (r >> 1) + 2 * t + (r & 1); }
__device__ __forceinline__ constexpr int fp8_lane_reg(int r, int h) { return Fp8OutAccum::index(r >> 1, h, r & 1); }
// Value dim of O^T block b, row half h: the permuted order in which a lane's four dims are adjacent V bytes.
__device__ __forceinline__ int fp8_out_dim(int b, int h, int warp, int g) {
  return 128 * (b >> 1) + 32 * warp + 4 * g + 2 * (b & 1) + h;
}

#if defined(MLASIM_WGMMA)
// Passes of 16 packed rows over a work.
__device__ __forceinline__ int fp8_passes(const WorkSpan& s) { return ceil_div(s.packed_rows, WgmmaFp8Config::kRows); }

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
// shared table for the tile being issued.
__device__ void produce_fp8_tiles(const DecodeParams& p, const Fp8TensorMaps& maps, int first, int last,
                                  unsigned char* smem_base) {
  using C = WgmmaFp8Config;
  using S = WgmmaFp8Smem;
  constexpr int kAhead = 3, kChunksPerRow = kQkDim / 16;
  const int u = static_cast<int>(threadIdx.x) - C::kConsumers;
  const WgmmaFp8Smem smem{smem_base};
  uint64_t* full = smem.full();
  uint64_t* empty = smem.empty();
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
      int* table = smem.slot_table(q);
      if (u < C::kTile) table[u] = slot[d];
      if (use > 0) wg::mbarrier_wait(&empty[s], (use - 1) & 1);
      wg::named_sync(C::kProducerBarrier, 128);
      unsigned char* stage = smem.stage(s);
      if (whole[d] && maps.box_rows > 0) {
        // A whole tile on pages of 16 or more tokens: thread 0 copies it as tensor boxes, page by page, each
        // landing in the swizzle the MMAs read; the others only arrive.
        if (u == 0) {
          wg::mbarrier_arrive_expect_tx(&full[s], S::kStageBytes);
          for (int r0 = 0; r0 < C::kTile; r0 += maps.box_rows) {
            const int y = table[r0];
#pragma unroll
            for (int a = 0; a < 4; ++a)
              wg::tensor_copy_2d(stage + a * S::kStageColumnBytes + r0 * 128, maps.columns, 128 * a, y, &full[s]);
            wg::tensor_copy_2d(stage + S::kStageTailOffset + r0 * 64, maps.tail, 512, y, &full[s]);
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

// A consumer thread's place: its warpgroup (grp, which takes tiles grp, grp + 2, ...), its warp in the
// warpgroup, its fragment coordinates, and its warpgroup's named barrier.
struct Fp8ConsumerLane {
  int lane, warp, grp, g, t, bar;
  __device__ __forceinline__ Fp8ConsumerLane() {
    const int tid = static_cast<int>(threadIdx.x);
    lane = tid & 31;
    warp = (tid >> 5) & 3;
    grp = tid >> 7;
    g = lane >> 2;
    t = lane & 3;
    bar = 1 + grp;
  }
};

// Stage Q: rows m0 .. m0+15 of the work as fp8 hi (rows 0..15) and lo (rows 16..31) parts in the K tile's
// layout, and each row's 1 / s_r (the 256 consumer threads, once per pass; warp w takes rows 2w and 2w + 1). The
// conversion loop stays rolled (its second reads of Q hit the L1): this code comes cold from memory at a
// kernel's start, and unrolled it held the first tile back.
__device__ __forceinline__ void stage_q(const WgmmaFp8Smem& smem, const DecodeParams& p, const WorkRow& w, int m0,
                                        int packed_rows) {
  using C = WgmmaFp8Config;
  unsigned char* qs = smem.q();
  float* q_inv_scale = smem.q_inv_scale();
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int H = p.heads;
  const uint32_t* rows[2];
  float scale[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int pr = m0 + 2 * warp + rr;
    rows[rr] =
        pr < packed_rows
            ? reinterpret_cast<const uint32_t*>(p.q + (static_cast<int64_t>(w.qo_start + pr / H) * H + pr % H) * kQkDim)
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
    *reinterpret_cast<uint16_t*>(qs + fp8_operand_offset<2 * C::kRows>(n + C::kRows, d)) = static_cast<uint16_t>(lo);
  }
  wg::fence_shared_for_async();
  wg::named_sync(C::kConsumersBarrier, C::kConsumers);
}

// QK^T: S^T = K [Qhi; Qlo]^T on the fp8 tensor cores, both operands in shared memory: 16 k steps over the four
// 128-dim columns and 2 over the 64-dim tail, even and odd steps in separate sums (two dependency chains). Then
// S = S_hi + S_lo / 16 (1 / s_r is applied with the softmax scale).
__device__ __forceinline__ void qk_scores(Fp8ScoreAccum& s, const unsigned char* kt, uint64_t qdesc, uint64_t qtail) {
  using S = WgmmaFp8Smem;
  Fp8QkAccum acc[2];
  // Descriptors are a base plus an add each; Q's bases are re-read per tile so that the compiler does not
  // keep 36 precomputed descriptors alive across the loop (it spilled them).
  uint64_t qd = qdesc, qt = qtail;
  asm volatile("" : "+l"(qd), "+l"(qt));
  const uint64_t kd = wg::smem_desc(kt, 16, 1024, true);
  const uint64_t ktl = wg::smem_desc_swizzle64(kt + S::kStageTailOffset, 512);
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < kQkDim / 32; ++ks) {
    const uint64_t a = ks < 16 ? wg::desc_advance(kd, (ks >> 2) * S::kStageColumnBytes + (ks & 3) * 32)
                               : wg::desc_advance(ktl, (ks - 16) * 32);
    const uint64_t b = ks < 16 ? wg::desc_advance(qd, (ks >> 2) * S::kQColumnBytes + (ks & 3) * 32)
                               : wg::desc_advance(qt, (ks - 16) * 32);
    wg::mma_m64n32k32_e4m3(acc[ks & 1].v, a, b, ks > 1);
  }
  wg::commit();
  wg::wait<0>();
  wg::pin(acc[0].v);
  wg::pin(acc[1].v);
  // Register k + 8 is column k's counterpart 16 columns on: the lo row of the same packed row.
#pragma unroll
  for (int k = 0; k < 8; ++k) s[k] = (acc[0][k] + acc[1][k]) + 0.0625f * (acc[0][k + 8] + acc[1][k + 8]);
}

// The consumer's per-pass constants of its four rows: the score scale (softmax scale, log2 e, KV scale and Q's
// 1 / s_r, applied inside the exponent) and the last visible token, with their minimum.
struct Fp8PassRows {
  float scale[4];
  int limit[4];
  int min_limit;
};

// Softmax step of one tile: mask, the rows' maxima over the warpgroup (the lanes of a column, then the four
// warps through shared memory), the running maxima and sums, the weights to P (fp16; column = token) and the
// rescale of the accumulators. Ends with the barrier after which P is complete and every warp has read the
// maxima.
__device__ __forceinline__ void softmax_step(Fp8ScoreAccum& s, OnlineSoftmax<4>& sm, Fp8OutAccum (&o)[8],
                                             const WgmmaFp8Smem& smem, const Fp8PassRows& rows, int tok0, int tok_end,
                                             const Fp8ConsumerLane& L) {
  using C = WgmmaFp8Config;
  float* xmax = smem.warp_max(L.grp);
  unsigned char* ps = smem.p(L.grp);
  // Register k is token 16 warp + g + 8 half(k) of the tile and the lane's row r = 2 block(k) + pair(k).
  auto row_of_reg = [](int k) { return 2 * Fp8ScoreAccum::block(k) + Fp8ScoreAccum::pair(k); };
  float mx[4] = {neg_inf(), neg_inf(), neg_inf(), neg_inf()};
  if (tok0 + C::kTile <= tok_end && tok0 + C::kTile - 1 <= rows.min_limit) {
#pragma unroll
    for (int k = 0; k < 8; ++k) mx[row_of_reg(k)] = fmaxf(mx[row_of_reg(k)], s[k]);
  } else {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int r = row_of_reg(k);
      const int tok = tok0 + 16 * L.warp + Fp8ScoreAccum::row(k, L.g);
      s[k] = tok < tok_end && tok <= rows.limit[r] ? s[k] : neg_inf();
      mx[r] = fmaxf(mx[r], s[k]);
    }
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 4));
    mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 8));
    mx[r] = fmaxf(mx[r], dev::shfl_xor(mx[r], 16));
  }
  if (L.g == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) xmax[L.warp * C::kRows + fp8_lane_row(r, L.t)] = mx[r];
  }
  wg::named_sync(L.bar, 128);
  float alpha[4], nbase[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int n = fp8_lane_row(r, L.t);
    const float m = fmaxf(fmaxf(xmax[n], xmax[C::kRows + n]), fmaxf(xmax[2 * C::kRows + n], xmax[3 * C::kRows + n]));
    float base;
    alpha[r] = sm.advance_max(r, m * rows.scale[r], base);
    nbase[r] = -base;
  }
  float rs[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int r = row_of_reg(k);
    const float pw = dev::exp2_fast(fmaf(s[k], rows.scale[r], nbase[r]));
    rs[r] += pw;
    const int col = 16 * L.warp + Fp8ScoreAccum::row(k, L.g);
    *reinterpret_cast<uint16_t*>(ps + swizzled16_offset(fp8_lane_row(r, L.t), col)) =
        static_cast<uint16_t>(dev::pack_f16x2(pw, 0.f) & 0xffffu);
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) sm.l[r] = sm.l[r] * alpha[r] + rs[r];
  if (alpha[0] != 1.f || alpha[1] != 1.f || alpha[2] != 1.f || alpha[3] != 1.f) {
#pragma unroll
    for (int b = 0; b < 8; ++b)
#pragma unroll
      for (int k = 0; k < 8; ++k) o[b][k] *= alpha[row_of_reg(k)];
  }
  wg::fence_shared_for_async();
  wg::named_sync(L.bar, 128);  // P complete; everyone has read the maxima
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
    wd[i] = *reinterpret_cast<const uint32_t*>(tile + pp * WgmmaFp8Smem::kStageColumnBytes + swizzle128_offset(tok, j) +
                                               4 * (g & 3));
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

// PV: O^T += V^T P^T in four k steps over the eight 64-dim blocks; each step's V fragments are converted while
// the previous step multiplies. The stage is freed as soon as this thread's last read of it is issued.
__device__ __forceinline__ void pv_accumulate(Fp8OutAccum (&o)[8], const unsigned char* kt, uint64_t pdesc,
                                              uint64_t* stage_empty, const Fp8ConsumerLane& L) {
  uint32_t v[2][32];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    uint32_t(&buf)[32] = v[kk & 1];
    if (kk >= 2) {
      wg::wait<1>();
      wg::pin(buf);
    }
#pragma unroll
    for (int pp = 0; pp < 4; ++pp) v_fragments(buf + 8 * pp, buf + 8 * pp + 4, kt, 16 * kk, pp, L.warp, L.g, L.t);
    if (kk == 3) wg::mbarrier_arrive(stage_empty);  // this thread's last read of the stage is done
    wg::fence();
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      const uint32_t(&frag)[4] = *reinterpret_cast<const uint32_t(*)[4]>(buf + 4 * b);
      wg::mma_m64n16k16_f16_ra(o[b].v, frag, wg::desc_advance(pdesc, kk * 32), 1);
    }
    wg::commit();
  }
  wg::wait<0>();
  wg::pin(v[0]);
  wg::pin(v[1]);
#pragma unroll
  for (int b = 0; b < 8; ++b) wg::pin(o[b].v);
}

// Merge, row states: each warpgroup's row sums over its lanes and warps; warpgroup 1's maxima and sums go to
// shared memory, and every consumer thread derives each of its rows' weights for the two halves (1 / l folded
// in): c0 for its own warpgroup's accumulators, c1 for warpgroup 1's. A split work writes each row's LSE.
__device__ __forceinline__ void merge_row_states(const DecodeParams& p, const WorkRow& w, const WgmmaFp8Smem& smem,
                                                 OnlineSoftmax<4>& sm, int m0, int packed_rows, float (&c0)[4],
                                                 float (&c1)[4], const Fp8ConsumerLane& L) {
  using C = WgmmaFp8Config;
  float* xsum = smem.warp_sum(L.grp);
  float* merge_m = smem.merge_max();
  float* merge_l = smem.merge_sum();
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    sm.l[r] += dev::shfl_xor(sm.l[r], 4);
    sm.l[r] += dev::shfl_xor(sm.l[r], 8);
    sm.l[r] += dev::shfl_xor(sm.l[r], 16);
  }
  if (L.g == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) xsum[L.warp * C::kRows + fp8_lane_row(r, L.t)] = sm.l[r];
  }
  wg::named_sync(L.bar, 128);
  float l_grp[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int n = fp8_lane_row(r, L.t);
    l_grp[r] = xsum[n] + xsum[C::kRows + n] + xsum[2 * C::kRows + n] + xsum[3 * C::kRows + n];
  }
  if (L.grp == 1 && L.warp == 0 && L.g == 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      merge_m[fp8_lane_row(r, L.t)] = sm.m[r];
      merge_l[fp8_lane_row(r, L.t)] = l_grp[r];
    }
  }
  wg::named_sync(C::kConsumersBarrier, C::kConsumers);  // warpgroup 1's maxima and sums are out
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int n = fp8_lane_row(r, L.t), pr = m0 + n;
    const float m1 = merge_m[n], mm = fmaxf(sm.m[r], m1);
    const float base = mm == neg_inf() ? 0.f : mm;
    const float f0 = dev::exp2_fast(sm.m[r] - base), f1 = dev::exp2_fast(m1 - base);
    const float l = l_grp[r] * f0 + merge_l[n] * f1;
    const float inv = l > 0.f ? p.out_scale / l : 0.f;
    c0[r] = f0 * inv;
    c1[r] = f1 * inv;
    if (L.grp == 0 && w.partial_qo_loc >= 0 && L.warp == 0 && L.g == 0 && pr < packed_rows)
      store_partial_lse(p, w, pr / p.heads, pr % p.heads, mm, l);
  }
}

// Merge and store: four rounds of 128 dims; in each, warpgroup 1 hands its accumulators of two 64-dim blocks to
// warpgroup 0 through shared memory, and warpgroup 0 writes the merged rows through the shared epilogue. The loop
// stays rolled, each round taking o[0] and o[1] and then shifting the accumulators down by two: it runs once per
// pass, and at a kernel's end its code comes cold from memory.
__device__ __forceinline__ void merge_and_store(const DecodeParams& p, const WorkRow& w, const WgmmaFp8Smem& smem,
                                                Fp8OutAccum (&o)[8], const float (&c0)[4], const float (&c1)[4], int m0,
                                                int packed_rows, const Fp8ConsumerLane& L) {
  using C = WgmmaFp8Config;
  float* xo = smem.merge_values();
#pragma unroll 1
  for (int pp = 0; pp < 4; ++pp) {
    if (L.grp == 1) {
#pragma unroll
      for (int r = 0; r < 4; ++r)
        *reinterpret_cast<float4*>(xo + fp8_lane_row(r, L.t) * 128 + 32 * L.warp + 4 * L.g) = make_float4(
            o[0][fp8_lane_reg(r, 0)], o[0][fp8_lane_reg(r, 1)], o[1][fp8_lane_reg(r, 0)], o[1][fp8_lane_reg(r, 1)]);
    }
    wg::named_sync(C::kConsumersBarrier, C::kConsumers);
    if (L.grp == 0) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int n = fp8_lane_row(r, L.t), pr = m0 + n;
        if (pr >= packed_rows) continue;
        // Blocks 0 and 1 of this round, halves 0 and 1: four adjacent value dims from fp8_out_dim(0, 0, ..).
        const float4 x = *reinterpret_cast<const float4*>(xo + n * 128 + 32 * L.warp + 4 * L.g);
        const float y0 = o[0][fp8_lane_reg(r, 0)] * c0[r] + x.x * c1[r];
        const float y1 = o[0][fp8_lane_reg(r, 1)] * c0[r] + x.y * c1[r];
        const float y2 = o[1][fp8_lane_reg(r, 0)] * c0[r] + x.z * c1[r];
        const float y3 = o[1][fp8_lane_reg(r, 1)] * c0[r] + x.w * c1[r];
        with_output_row(p, w, pr / p.heads, pr % p.heads, 128 * pp,
                        [&](const auto& out) { out.store4(fp8_out_dim(0, 0, L.warp, L.g), y0, y1, y2, y3); });
      }
    }
    wg::named_sync(C::kConsumersBarrier, C::kConsumers);  // the round's exchange (and, last, Q) is free again
#pragma unroll
    for (int b = 0; b < 6; ++b)
#pragma unroll
      for (int k = 0; k < 8; ++k) o[b][k] = o[b + 2][k];
  }
}

// One pass of a work on the consumer warpgroups: rows m0 .. m0+15 against the work's tiles q0, q0+1, ... of the
// producer's sequence.
// `first_kv` (instrumented runs, the work's first pass, thread 0): stamped when its first tile has landed.
__device__ void consume_fp8_pass(const DecodeParams& p, const WorkRow& w, const WorkSpan& span, int m0, uint32_t q0,
                                 unsigned char* smem_base, WorkStamp* first_kv) {
  using C = WgmmaFp8Config;
  const WgmmaFp8Smem smem{smem_base};
  const Fp8ConsumerLane L;
  uint64_t* full = smem.full();
  uint64_t* empty = smem.empty();
  const int packed_rows = span.packed_rows, tok_end = span.tok_end;
  const uint64_t pdesc = wg::smem_desc(smem.p(L.grp), 16, 1024, true);
  const uint64_t qdesc = wg::smem_desc(smem.q(), 16, 1024, true);
  const uint64_t qtail = wg::smem_desc_swizzle64(smem.q() + WgmmaFp8Smem::kQTailOffset, 512);

  stage_q(smem, p, w, m0, packed_rows);
  Fp8PassRows rows;
#pragma unroll
  for (int r = 0; r < 4; ++r) rows.scale[r] = p.score_scale_log2 * smem.q_inv_scale()[fp8_lane_row(r, L.t)];
#pragma unroll
  for (int r = 0; r < 4; ++r)
    rows.limit[r] = last_visible_token(p, w, span, min(m0 + fp8_lane_row(r, L.t), packed_rows - 1) / p.heads);
  rows.min_limit = min(min(rows.limit[0], rows.limit[1]), min(rows.limit[2], rows.limit[3]));
  Fp8OutAccum o[8];
#pragma unroll
  for (int b = 0; b < 8; ++b) o[b].fill(0.f);
  OnlineSoftmax<4> sm;
  sm.reset();

  for (int i = L.grp; i < span.num_tiles; i += 2) {
    const uint32_t q = q0 + i;
    const int s_idx = static_cast<int>(q % C::kStages);
    wg::mbarrier_wait(&full[s_idx], (q / C::kStages) & 1);
    if (i == 0) stamp_first_kv(first_kv);
    const unsigned char* kt = smem.stage(s_idx);
    Fp8ScoreAccum s;
    qk_scores(s, kt, qdesc, qtail);
    softmax_step(s, sm, o, smem, rows, span.tok_begin + i * C::kTile, tok_end, L);
    pv_accumulate(o, kt, pdesc, &empty[s_idx], L);
  }

  float c0[4], c1[4];
  merge_row_states(p, w, smem, sm, m0, packed_rows, c0, c1, L);
  merge_and_store(p, w, smem, o, c0, c1, m0, packed_rows, L);
}
#endif

// Works [first, last) on one workgroup: mbarriers, then the producer warpgroup and the two consumer warpgroups.
__device__ void run_works_wgmma_fp8(const DecodeParams& p, const Fp8TensorMaps& maps, int first, int last,
                                    unsigned char* smem) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaFp8Config;
  uint64_t* full = WgmmaFp8Smem{smem}.full();
  if (threadIdx.x == 0) {
    for (int i = 0; i < C::kStages; ++i) {
      wg::mbarrier_init(&full[i], 128);               // full: every producer thread, when its copies land
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
    // The producer runs ahead across works, so the fixed part ends when the consumers hold the first tile.
    WorkStamp* stamp = threadIdx.x == 0 ? work_stamp(p, wi, 0) : nullptr;
    stamp_begin(stamp);
    for (int pass = 0; pass < fp8_passes(span); ++pass, q0 += span.num_tiles)
      consume_fp8_pass(p, w, span, pass * C::kRows, q0, smem, pass == 0 ? stamp : nullptr);
    stamp_end(stamp);
  }
#else
  (void)p, (void)maps, (void)first, (void)last, (void)smem;
#endif
}

}  // namespace mlasim::kernels
