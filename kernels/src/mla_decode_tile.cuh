#pragma once
// Portable decode kernel: one work of a plan on one workgroup, a qo tile (packed rows = query rows x heads)
// against one KV range. KV tiles of 64 tokens stream through shared memory in a multi-stage asynchronous
// pipeline; each group of four warps keeps 16 packed rows of Q in registers, splits QK^T over the tile's tokens
// (16 per warp), merges the row maxima through shared memory, and splits PV over the 512 value dims (128 per
// warp). With two groups, both share each KV tile (32 packed rows per pass); larger tiles take several passes over
// the range. A 16-row tile runs with two groups too (kSplitTokens): each group takes half of every KV tile with
// its own online softmax, and the two states merge through shared memory at the end, so eight warps per SM hide
// the latencies.
// fp8 KV stays fp8 in shared memory and turns into fp16 in registers right before each fp16 MMA (e4m3 -> fp16 is
// exact and one instruction per pair). The k order inside each 32-dim (QK) or 16-token (PV) block is permuted so
// that a lane's fp8 operands sit next to each other in shared memory; Q and P follow the same order, and the
// value dims come back to their place when the output is written.
// Phases of a pass: stage_q, then per KV tile advance_kv_pipeline, qk_scores, softmax_step, pv_accumulate; at the
// end row_totals, merge_token_halves (16-row tiles) and store_output.
#include <cstdint>

#include "accum_fragment.cuh"
#include "device_primitives.cuh"
#include "mla_output.cuh"
#include "mla_params.h"
#include "mla_work.cuh"
#include "online_softmax.cuh"
#include "work_stamps.cuh"

namespace mlasim::kernels {

template <bool kFp8Kv, int kGroupsPerLaunch, bool kSplitTokensPerGroup>
struct DecodeConfig {
  static constexpr bool kFp8 = kFp8Kv;
  static constexpr int kGroups = kGroupsPerLaunch;
  static constexpr bool kSplitTokens = kSplitTokensPerGroup;
  static constexpr int kTile = 64;  // KV tokens per shared-memory tile
  static constexpr int kStages = kFp8 ? 4 : 3;
  static constexpr int kWarps = 4 * kGroups;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRows = kSplitTokens ? 16 : 16 * kGroups;  // packed rows per pass
  static constexpr int kWarpTokens = kSplitTokens ? 8 : 16;       // QK^T tokens per warp and KV tile
  static constexpr int kScoreRegs = 4 * (kWarpTokens / 8);        // S accumulators per lane
  // Rows padded by 16 bytes so that ldmatrix's eight row addresses fall in distinct bank groups.
  static constexpr int kBf16Row = kQkDim * 2 + 16;
  static constexpr int kKvBytes = kFp8 ? 1 : 2;
  // fp8 rows padded by 32 bytes (152 words, 24 mod 32 banks): the fp8 operand loads below are conflict-free.
  static constexpr int kStageRow = kFp8 ? kQkDim + 32 : kBf16Row;
  static constexpr int kChunks = kQkDim * kKvBytes / 16;       // 16-byte copies per token row
  static constexpr int kRowsPerThread = kTile * 8 / kThreads;  // 8 threads copy each token row
  static constexpr int kStageBytes = kTile * kStageRow;
  static constexpr int kPRow = kTile * 2 + 16;  // one packed row of P (bf16 or fp16), padded like the stages
};

// Shared memory of the portable kernel, and where each part starts.
template <class C>
struct DecodeSmem {
  static constexpr int kStageOffset = 0;  // kStages KV tiles
  static constexpr int kPOffset = kStageOffset + C::kStages * C::kStageBytes;
  static constexpr int kPGroupBytes = 16 * C::kPRow;  // per group: P of its 16 packed rows
  static constexpr int kExchangeOffset = kPOffset + C::kGroups * kPGroupBytes;
  static constexpr int kExchangeGroupFloats = 4 * 16;  // per group: each warp's value of each of the 16 rows
  static constexpr int kBytes = kExchangeOffset + C::kGroups * kExchangeGroupFloats * 4;
  // After a pass's last tile the split-token merge reuses the stages: group 1's accumulators (each warp's 64,
  // lane-interleaved), then its 16 row maxima and 16 row sums.
  static constexpr int kMergeValuesOffset = kStageOffset;
  static constexpr int kMergeValuesFloats = 4 * 64 * 32;
  static constexpr int kMergeRowsOffset = kMergeValuesOffset + kMergeValuesFloats * 4;
  static_assert(kMergeRowsOffset + 2 * 16 * 4 <= kPOffset, "the split-token merge fits in the stages");

  unsigned char* base;
  __device__ __forceinline__ unsigned char* stage(int s) const { return base + kStageOffset + s * C::kStageBytes; }
  __device__ __forceinline__ unsigned char* p_rows(int group) const { return base + kPOffset + group * kPGroupBytes; }
  __device__ __forceinline__ float* exchange(int group) const {
    return reinterpret_cast<float*>(base + kExchangeOffset) + group * kExchangeGroupFloats;
  }
  __device__ __forceinline__ float* merge_values() const { return reinterpret_cast<float*>(base + kMergeValuesOffset); }
  __device__ __forceinline__ float* merge_rows() const { return reinterpret_cast<float*>(base + kMergeRowsOffset); }
};

// A thread's place: its group of four warps, its warp in the group, and its m16n8 fragment coordinates.
struct PortableLane {
  int lane, group, wig, g, t;
  __device__ __forceinline__ PortableLane() {
    lane = dev::lane_id();
    const int warp = dev::warp_id();
    group = warp / 4;
    wig = warp % 4;
    g = lane >> 2;
    t = lane & 3;
  }
};

// The PV accumulators of a warp: 16 n8 blocks over its 128 value dims, rows g and g + 8 of the group's 16.
using PvAccum = AccumFragment<64>;

// Value dim (of the warp's 128) of PV accumulator register i. bf16: the fragment's own column. fp8: n8 block
// 4G + c holds dims 32G + 4 col + c, the permuted order in which a lane's V bytes are adjacent (pv_accumulate).
template <bool kFp8>
__device__ __forceinline__ int pv_dim(int i, int t) {
  const int col = 2 * t + PvAccum::pair(i), n = PvAccum::block(i);
  if constexpr (kFp8) return 32 * (n >> 2) + 4 * col + (n & 3);
  return 8 * n + col;
}

// Page-table entries of the token rows this thread copies in one tile: physical page (-1 past the range) and
// offset in it. The pipeline loads them a tile ahead and turns them into slots only when it issues the copies,
// so the page table's latency hides behind a tile of compute (using a loaded entry right away would stall the
// warp for the load's whole latency).
template <class C>
struct TileRows {
  int page[C::kRowsPerThread], offset[C::kRowsPerThread];
};

template <class C>
__device__ __forceinline__ void fetch_tile_slots(const DecodeParams& p, int tok0, int tok_end, int page_begin,
                                                 TileRows<C>& rows) {
  const int row0 = static_cast<int>(threadIdx.x) / 8;
#pragma unroll
  for (int k = 0; k < C::kRowsPerThread; ++k) {
    const int tok = tok0 + row0 + k * (C::kThreads / 8);
    rows.page[k] = tok < tok_end ? p.kv_indices[page_begin + tok / p.page_size] : -1;
    rows.offset[k] = tok % p.page_size;
  }
}

// Issues the asynchronous copies of one KV tile (its rows from fetch_tile_slots) into `stage`.
template <class C>
__device__ __forceinline__ void issue_kv_tile(const DecodeParams& p, unsigned char* stage, const TileRows<C>& rows) {
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int k = 0; k < C::kRowsPerThread; ++k) {
    const bool valid = rows.page[k] >= 0;
    const int64_t slot = valid ? static_cast<int64_t>(rows.page[k]) * p.page_size + rows.offset[k] : 0;
    const unsigned char* src = p.kv + slot * (kQkDim * C::kKvBytes);
    unsigned char* dst = stage + (tid / 8 + k * (C::kThreads / 8)) * C::kStageRow;
    for (int c = tid % 8; c < C::kChunks; c += 8) dev::copy_async_16(dst + 16 * c, src + 16 * c, valid);
  }
}

// Issues the first kStages - 1 tiles of the work and loads the page-table entries of the next one.
template <class C>
__device__ __forceinline__ void start_kv_pipeline(const DecodeParams& p, const DecodeSmem<C>& smem,
                                                  const WorkSpan& span, TileRows<C>& slots) {
#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < span.num_tiles) {
      fetch_tile_slots<C>(p, span.tok_begin + s * C::kTile, span.tok_end, span.page_begin, slots);
      issue_kv_tile<C>(p, smem.stage(s), slots);
    }
    dev::copy_async_commit();
  }
  if (C::kStages - 1 < span.num_tiles)
    fetch_tile_slots<C>(p, span.tok_begin + (C::kStages - 1) * C::kTile, span.tok_end, span.page_begin, slots);
}

// Waits for tile `it`; then, every warp being past the previous tile, refills that tile's stage with tile
// it + kStages - 1 and loads the page-table entries of the one after.
template <class C>
__device__ __forceinline__ void advance_kv_pipeline(const DecodeParams& p, const DecodeSmem<C>& smem,
                                                    const WorkSpan& span, int it, TileRows<C>& slots) {
  dev::copy_async_wait<C::kStages - 2>();
  __syncthreads();
  const int next = it + C::kStages - 1;
  if (next < span.num_tiles) {
    issue_kv_tile<C>(p, smem.stage(next % C::kStages), slots);
    if (next + 1 < span.num_tiles)
      fetch_tile_slots<C>(p, span.tok_begin + (next + 1) * C::kTile, span.tok_end, span.page_begin, slots);
  }
  dev::copy_async_commit();
}

// Logical k position (inside a 16-token block of P) of physical token tau: the fp8 PV operand of lane (g, t)
// holds tokens t, t+4, t+8, t+12, which the fragment layout calls k = 2t, 2t+1, 2t+8, 2t+9.
__host__ __device__ constexpr int fp8_p_column(int tau) {
  const int r = tau >> 2;
  return 2 * (tau & 3) + r + (r >= 2 ? 6 : 0);
}

// The lane's two packed rows of a pass (g and g + 8 of its group's 16): query row in the tile, head, and the
// last KV token each may see.
struct LaneRows {
  int qrow[2], head[2], limit[2];
};

__device__ __forceinline__ LaneRows lane_rows(const DecodeParams& p, const WorkRow& w, const WorkSpan& span, int mrow,
                                              bool active, int g) {
  LaneRows r;
  for (int h = 0; h < 2; ++h) {
    const int pr = active ? mrow + g + 8 * h : 0;
    r.qrow[h] = pr / p.heads;
    r.head[h] = pr % p.heads;
    r.limit[h] = last_visible_token(p, w, span, r.qrow[h]);
  }
  return r;
}

// Q of the lane's two rows as m16n8k16 A fragments over the 576 dims (36 k steps).
struct QFragments {
  uint32_t a[kQkDim / 16][4];
};

// A bf16 pair of Q as the MMA operand: itself for bf16 KV, rounded to fp16 for the fp8 path.
template <bool kFp8>
__device__ __forceinline__ uint32_t q_operand(const uint16_t* q) {
  const uint32_t v = *reinterpret_cast<const uint32_t*>(q);
  if constexpr (kFp8) return dev::pack_f16x2(dev::bf16_lo(v), dev::bf16_hi(v));
  return v;
}

// Stage Q: the lane's two rows into registers (zeros for a group past the tile's rows), once per pass.
template <bool kFp8>
__device__ __forceinline__ void stage_q(QFragments& qf, const DecodeParams& p, const WorkRow& w, const LaneRows& rows,
                                        bool active, int t) {
  const uint16_t* q0 = p.q + (static_cast<int64_t>(w.qo_start + rows.qrow[0]) * p.heads + rows.head[0]) * kQkDim;
  const uint16_t* q1 = p.q + (static_cast<int64_t>(w.qo_start + rows.qrow[1]) * p.heads + rows.head[1]) * kQkDim;
#pragma unroll
  for (int ks = 0; ks < kQkDim / 16; ++ks) {
    // Dims of a[0]/a[1] and of a[2]/a[3]; the fp8 path's order matches its K loads (8 bytes per lane).
    const int d0 = kFp8 ? 32 * (ks / 2) + 8 * t + 4 * (ks & 1) : 16 * ks + 2 * t;
    const int d1 = kFp8 ? d0 + 2 : d0 + 8;
    qf.a[ks][0] = active ? q_operand<kFp8>(q0 + d0) : 0u;
    qf.a[ks][1] = active ? q_operand<kFp8>(q1 + d0) : 0u;
    qf.a[ks][2] = active ? q_operand<kFp8>(q0 + d1) : 0u;
    qf.a[ks][3] = active ? q_operand<kFp8>(q1 + d1) : 0u;
  }
}

// QK^T: S = Q K^T for this warp's tokens of the tile (from wtok, blocks of 8). Even and odd k steps accumulate
// separately, so independent chains hide the matrix unit's latency.
template <class C>
__device__ __forceinline__ void qk_scores(AccumFragment<C::kScoreRegs>& s, const QFragments& qf,
                                          const unsigned char* kt, int wtok, int lane) {
  constexpr int kJ = C::kScoreRegs / 4;
  const int g = lane >> 2, t = lane & 3;
  AccumFragment<C::kScoreRegs> s_odd;
#pragma unroll
  for (int i = 0; i < C::kScoreRegs; ++i) s[i] = s_odd[i] = 0.f;
#pragma unroll
  for (int kk = 0; kk < kQkDim / 32; ++kk) {
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      uint32_t kb[4];
      if constexpr (C::kFp8) {
        // Token 8j+g, dims 32kk+8t .. +7: two k steps' B fragments in one 8-byte load.
        const uint2 v = *reinterpret_cast<const uint2*>(kt + (wtok + 8 * j + g) * C::kStageRow + 32 * kk + 8 * t);
        kb[0] = dev::fp8x2_to_f16x2(v.x);
        kb[1] = dev::fp8x2_to_f16x2(v.x >> 16);
        kb[2] = dev::fp8x2_to_f16x2(v.y);
        kb[3] = dev::fp8x2_to_f16x2(v.y >> 16);
        dev::mma_f16_16816(s.block_regs(j), qf.a[2 * kk], kb);
        dev::mma_f16_16816(s_odd.block_regs(j), qf.a[2 * kk + 1], kb + 2);
      } else {
        const uint32_t off = (wtok + 8 * j + (lane & 7)) * C::kStageRow + (32 * kk + 8 * (lane >> 3)) * 2;
        dev::ldmatrix_x4(kb, kt, off);
        dev::mma_bf16_16816(s.block_regs(j), qf.a[2 * kk], kb);
        dev::mma_bf16_16816(s_odd.block_regs(j), qf.a[2 * kk + 1], kb + 2);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < C::kScoreRegs; ++i) s[i] += s_odd[i];
}

// Softmax step of one tile for the lane's two rows: scale and mask the scores (tile_tok = the warp's first
// token), take the tile's row maxima over the group's four warps through shared memory, move the running maxima,
// write the weights P for the PV product (bf16; fp16 in the fp8 k order), and rescale the running sums and the
// accumulators. Ends with the barrier after which P is complete.
template <class C>
__device__ __forceinline__ void softmax_step(AccumFragment<C::kScoreRegs>& s, OnlineSoftmax<2>& sm, PvAccum& o,
                                             float* exchange, unsigned char* pbuf, const LaneRows& rows, int tile_tok,
                                             int tok_end, float score_scale, int wtok, const PortableLane& L) {
  using S = AccumFragment<C::kScoreRegs>;
  const int g = L.g, t = L.t;
  float mx[2] = {neg_inf(), neg_inf()};
#pragma unroll
  for (int i = 0; i < C::kScoreRegs; ++i) {
    const int tok = tile_tok + S::column(i, t);
    const int h = S::half(i);
    const bool valid = tok < tok_end && tok <= rows.limit[h];
    s[i] = valid ? s[i] * score_scale : neg_inf();
    mx[h] = fmaxf(mx[h], s[i]);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 1));
    mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 2));
  }
  if (t == 0) {
    exchange[L.wig * 16 + g] = mx[0];
    exchange[L.wig * 16 + g + 8] = mx[1];
  }
  __syncthreads();
  float alpha[2], base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float tm = exchange[g + 8 * h];
#pragma unroll
    for (int k = 1; k < 4; ++k) tm = fmaxf(tm, exchange[k * 16 + g + 8 * h]);
    alpha[h] = sm.advance_max(h, tm, base[h]);
  }
  float rs[2] = {0.f, 0.f};
#pragma unroll
  for (int j = 0; j < S::kBlocks; ++j) {
    // Weights of row g (columns 2t, 2t + 1 of block j) and of row g + 8.
    const float p0 = dev::exp2_fast(s.at(j, 0, 0) - base[0]), p1 = dev::exp2_fast(s.at(j, 0, 1) - base[0]);
    const float p2 = dev::exp2_fast(s.at(j, 1, 0) - base[1]), p3 = dev::exp2_fast(s.at(j, 1, 1) - base[1]);
    rs[0] += p0 + p1;
    rs[1] += p2 + p3;
    if constexpr (C::kFp8) {
      const uint32_t top = dev::pack_f16x2(p0, p1), bottom = dev::pack_f16x2(p2, p3);
      const int tau = wtok + 8 * j + 2 * t;  // the permutation works inside 16-token blocks
      const int c0 = ((tau & ~15) + fp8_p_column(tau & 15)) * 2;
      const int c1 = ((tau & ~15) + fp8_p_column((tau & 15) + 1)) * 2;
      *reinterpret_cast<uint16_t*>(pbuf + g * C::kPRow + c0) = static_cast<uint16_t>(top);
      *reinterpret_cast<uint16_t*>(pbuf + g * C::kPRow + c1) = static_cast<uint16_t>(top >> 16);
      *reinterpret_cast<uint16_t*>(pbuf + (g + 8) * C::kPRow + c0) = static_cast<uint16_t>(bottom);
      *reinterpret_cast<uint16_t*>(pbuf + (g + 8) * C::kPRow + c1) = static_cast<uint16_t>(bottom >> 16);
    } else {
      const int col = (wtok + 8 * j + 2 * t) * 2;
      *reinterpret_cast<uint32_t*>(pbuf + g * C::kPRow + col) = dev::pack_bf16x2(p0, p1);
      *reinterpret_cast<uint32_t*>(pbuf + (g + 8) * C::kPRow + col) = dev::pack_bf16x2(p2, p3);
    }
  }
  sm.l[0] = sm.l[0] * alpha[0] + rs[0];
  sm.l[1] = sm.l[1] * alpha[1] + rs[1];
  o.scale_rows(alpha[0], alpha[1]);
  __syncthreads();
}

// PV: O += P V over this warp's 128 value dims and the group's 16-token steps of the tile.
template <class C>
__device__ __forceinline__ void pv_accumulate(PvAccum& o, const unsigned char* pbuf, const unsigned char* kt,
                                              const PortableLane& L) {
  const int lane = L.lane, wig = L.wig, g = L.g, t = L.t;
  constexpr int kSteps = C::kSplitTokens ? C::kTile / 32 : C::kTile / 16;  // 16-token steps of this group
  const int ks0 = C::kSplitTokens ? kSteps * L.group : 0;
#pragma unroll
  for (int kq = 0; kq < kSteps; ++kq) {
    const int ks = ks0 + kq;
    uint32_t pa[4];
    dev::ldmatrix_x4(pa, pbuf, (lane & 15) * C::kPRow + (16 * ks + 8 * (lane >> 4)) * 2);
    if constexpr (C::kFp8) {
      // Per 32 value dims: tokens t+4r (r = 0..3) x dims 4g..4g+3, one 4-byte load each, so lane (g, t) feeds
      // dim 4g+i of n8 block 4G+i (pv_dim).
#pragma unroll
      for (int G = 0; G < 4; ++G) {
        const unsigned char* v = kt + (16 * ks + t) * C::kStageRow + 128 * wig + 32 * G + 4 * g;
        const uint32_t w0 = *reinterpret_cast<const uint32_t*>(v);
        const uint32_t w1 = *reinterpret_cast<const uint32_t*>(v + 4 * C::kStageRow);
        const uint32_t w2 = *reinterpret_cast<const uint32_t*>(v + 8 * C::kStageRow);
        const uint32_t w3 = *reinterpret_cast<const uint32_t*>(v + 12 * C::kStageRow);
        const uint32_t x01[2] = {dev::interleave_bytes<false>(w0, w1), dev::interleave_bytes<true>(w0, w1)};
        const uint32_t x23[2] = {dev::interleave_bytes<false>(w2, w3), dev::interleave_bytes<true>(w2, w3)};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const uint32_t vb[2] = {dev::fp8x2_to_f16x2(x01[i / 2] >> (16 * (i & 1))),
                                  dev::fp8x2_to_f16x2(x23[i / 2] >> (16 * (i & 1)))};
          dev::mma_f16_16816(o.block_regs(4 * G + i), pa, vb);
        }
      }
    } else {
#pragma unroll
      for (int nb = 0; nb < 8; ++nb) {
        uint32_t vb[4];
        const int d0 = 128 * wig + 16 * nb;
        const uint32_t off = (16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1)) * C::kStageRow + (d0 + 8 * (lane >> 4)) * 2;
        dev::ldmatrix_x4_trans(vb, kt, off);
        dev::mma_bf16_16816(o.block_regs(2 * nb), pa, vb);
        dev::mma_bf16_16816(o.block_regs(2 * nb + 1), pa, vb + 2);
      }
    }
  }
}

// Row sums of the pass: the quad's lanes, then the group's four warps (every warp saw the same maxima). Leaves
// each row's total in sm.l.
__device__ __forceinline__ void row_totals(OnlineSoftmax<2>& sm, float* exchange, const PortableLane& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    sm.l[h] += dev::shfl_xor(sm.l[h], 1);
    sm.l[h] += dev::shfl_xor(sm.l[h], 2);
  }
  __syncthreads();
  if (L.t == 0) {
    exchange[L.wig * 16 + L.g] = sm.l[0];
    exchange[L.wig * 16 + L.g + 8] = sm.l[1];
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float total = 0.f;
#pragma unroll
    for (int k = 0; k < 4; ++k) total += exchange[k * 16 + L.g + 8 * h];
    sm.l[h] = total;
  }
}

// Merge of a 16-row tile's two halves: group 1 hands its state (row maxima, row sums, unnormalised
// accumulators) to group 0 through the stages, and group 0 folds it into its own.
template <class C>
__device__ __forceinline__ void merge_token_halves(const DecodeSmem<C>& smem, OnlineSoftmax<2>& sm, PvAccum& o,
                                                   const PortableLane& L) {
  __syncthreads();
  float* merge = smem.merge_values();
  float* merge_rows = smem.merge_rows();
  if (L.group == 1) {
#pragma unroll
    for (int i = 0; i < 64; ++i) merge[(L.wig * 64 + i) * 32 + L.lane] = o[i];
    if (L.wig == 0 && L.t == 0)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        merge_rows[L.g + 8 * h] = sm.m[h];
        merge_rows[16 + L.g + 8 * h] = sm.l[h];
      }
  }
  __syncthreads();
  if (L.group == 0) {
    float own[2], other[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float m1 = merge_rows[L.g + 8 * h];
      const float m_new = fmaxf(sm.m[h], m1);
      const float base = m_new == neg_inf() ? 0.f : m_new;
      own[h] = exp2f(sm.m[h] - base);
      other[h] = exp2f(m1 - base);
      sm.l[h] = sm.l[h] * own[h] + merge_rows[16 + L.g + 8 * h] * other[h];
      sm.m[h] = m_new;
    }
#pragma unroll
    for (int i = 0; i < 64; ++i)
      o[i] = o[i] * own[PvAccum::half(i)] + merge[(L.wig * 64 + i) * 32 + L.lane] * other[PvAccum::half(i)];
  }
}

// Store: the lane's two rows, normalised (and scaled back by the KV scale), through the shared epilogue; pairs
// of adjacent value dims go out together.
template <bool kFp8>
__device__ __forceinline__ void store_output(const DecodeParams& p, const WorkRow& w, const LaneRows& rows,
                                             const OnlineSoftmax<2>& sm, PvAccum& o, const PortableLane& L) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float l = sm.l[h];
    const float inv = l > 0.f ? p.out_scale / l : 0.f;
    float lo[16], hi[16];
    int dim[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      // The registers of the k-th pair: the two columns of one block (bf16), or column e of blocks n and n + 1
      // (fp8, where those are adjacent dims).
      const int n = kFp8 ? 4 * (k / 4) + 2 * (k & 1) : k, e = kFp8 ? (k >> 1) & 1 : 0;
      const int first = PvAccum::index(n, h, e), second = kFp8 ? PvAccum::index(n + 1, h, e) : first + 1;
      lo[k] = o[first] * inv;
      hi[k] = o[second] * inv;
      dim[k] = pv_dim<kFp8>(first, L.t);
    }
    with_output_row(p, w, rows.qrow[h], rows.head[h], 128 * L.wig, [&](const auto& out) {
#pragma unroll
      for (int k = 0; k < 16; ++k) out.store2(dim[k], lo[k], hi[k]);
    });
    if (w.partial_qo_loc >= 0 && L.wig == 0 && L.t == 0)
      store_partial_lse(p, w, rows.qrow[h], rows.head[h], sm.m[h], l);
  }
}

// `stamp` (instrumented runs): thread 0 records the work's start, its first KV tile issued and its end.
template <bool kFp8, int kGroups, bool kSplitTokens>
__device__ void run_work(const DecodeParams& p, const WorkRow& w, unsigned char* smem_base, WorkStamp* stamp) {
  using C = DecodeConfig<kFp8, kGroups, kSplitTokens>;
  if (threadIdx.x != 0) stamp = nullptr;
  stamp_begin(stamp);
  const DecodeSmem<C> smem{smem_base};
  const PortableLane L;
  unsigned char* pbuf = smem.p_rows(L.group);
  float* exchange = smem.exchange(L.group);
  const WorkSpan span = work_span<C::kTile>(p, w);

  for (int m0 = 0; m0 < span.packed_rows; m0 += C::kRows) {
    const int mrow = kSplitTokens ? m0 : m0 + 16 * L.group;
    const bool active = mrow < span.packed_rows;
    const LaneRows rows = lane_rows(p, w, span, mrow, active, L.g);
    QFragments qf;
    stage_q<kFp8>(qf, p, w, rows, active, L.t);
    PvAccum o;
    o.fill(0.f);
    OnlineSoftmax<2> sm;
    sm.reset();

    TileRows<C> slots;
    start_kv_pipeline<C>(p, smem, span, slots);
    if (m0 == 0) stamp_first_kv(stamp);
    for (int it = 0; it < span.num_tiles; ++it) {
      advance_kv_pipeline<C>(p, smem, span, it, slots);
      const unsigned char* kt = smem.stage(it % C::kStages);
      const int wtok = kSplitTokens ? 32 * L.group + 8 * L.wig : 16 * L.wig;  // the warp's first token
      AccumFragment<C::kScoreRegs> s;
      qk_scores<C>(s, qf, kt, wtok, L.lane);
      softmax_step<C>(s, sm, o, exchange, pbuf, rows, span.tok_begin + it * C::kTile + wtok, span.tok_end,
                      p.score_scale_log2, wtok, L);
      pv_accumulate<C>(o, pbuf, kt, L);
    }
    dev::copy_async_wait<0>();

    row_totals(sm, exchange, L);
    if constexpr (kSplitTokens) merge_token_halves<C>(smem, sm, o, L);
    if (active && (!kSplitTokens || L.group == 0)) store_output<kFp8>(p, w, rows, sm, o, L);
    __syncthreads();  // the next pass reuses the stages and the exchange buffer
  }
  stamp_end(stamp);
}

}  // namespace mlasim::kernels
