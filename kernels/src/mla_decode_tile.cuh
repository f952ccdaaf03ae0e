#pragma once
// One work of a plan on one workgroup: a qo tile (packed rows = query rows x heads) against one KV range.
// KV tiles of 64 tokens stream through shared memory in a multi-stage asynchronous pipeline; each group of four
// warps keeps 16 packed rows of Q in registers, splits QK^T over the tile's tokens (16 per warp), merges the
// row maxima through shared memory, and splits PV over the 512 value dims (128 per warp). With two groups, both
// share each KV tile (32 packed rows per pass); larger tiles take several passes over the range. A 16-row tile
// runs with two groups too (kSplitTokens): each group takes half of every KV tile with its own online softmax,
// and the two states merge through shared memory at the end, so eight warps per SM hide the latencies.
// fp8 KV stays fp8 in shared memory and turns into fp16 in registers right before each fp16 MMA (e4m3 -> fp16 is
// exact and one instruction per pair). The k order inside each 32-dim (QK) or 16-token (PV) block is permuted so
// that a lane's fp8 operands sit next to each other in shared memory; Q and P follow the same order, and the
// value dims come back to their place when the output is written.
#include <cstdint>

#include "device_primitives.cuh"
#include "mla_params.h"

namespace mlasim::kernels {

inline constexpr int kQkDim = 576;
inline constexpr int kVDim = 512;

template <bool kFp8, int kGroups, bool kSplitTokens>
struct DecodeConfig {
  static constexpr int kTile = 64;          // KV tokens per shared-memory tile
  static constexpr int kStages = kFp8 ? 4 : 3;
  static constexpr int kWarps = 4 * kGroups;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRows = kSplitTokens ? 16 : 16 * kGroups;  // packed rows per pass
  static constexpr int kWarpTokens = kSplitTokens ? 8 : 16;       // QK^T tokens per warp and KV tile
  // Rows padded by 16 bytes so that ldmatrix's eight row addresses fall in distinct bank groups.
  static constexpr int kBf16Row = kQkDim * 2 + 16;
  static constexpr int kKvBytes = kFp8 ? 1 : 2;
  // fp8 rows padded by 32 bytes (152 words, 24 mod 32 banks): the fp8 operand loads below are conflict-free.
  static constexpr int kStageRow = kFp8 ? kQkDim + 32 : kBf16Row;
  static constexpr int kChunks = kQkDim * kKvBytes / 16;  // 16-byte copies per token row
  static constexpr int kRowsPerThread = kTile * 8 / kThreads;  // 8 threads copy each token row
  static constexpr int kStageBytes = kTile * kStageRow;
  static constexpr int kPRow = kTile * 2 + 16;
  static constexpr int kPBytes = kGroups * 16 * kPRow;
  static constexpr int kExchangeBytes = kGroups * 4 * 16 * 4;
  static constexpr int kSmemBytes = kStages * kStageBytes + kPBytes + kExchangeBytes;
};

__device__ __forceinline__ int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Where one work sits in its request: KV tokens [tok_begin, tok_end) of kv_len, the request's page-list start and
// query rows, and the work's tiles of kTile tokens and packed rows. Shared by both decode kernels.
struct WorkSpan {
  int kv_len, page_begin, q_begin, qlen, tok_begin, tok_end, num_tiles, packed_rows;
};
template <int kTile>
__device__ __forceinline__ WorkSpan work_span(const DecodeParams& p, const WorkRow& w) {
  WorkSpan s;
  const int b = w.batch_idx;
  s.kv_len = p.batch_kv_len[b];
  s.page_begin = p.batch_kv_page_begin[b];
  s.q_begin = p.batch_q_begin[b];
  s.qlen = p.batch_qlen[b];
  s.tok_begin = (w.kv_start - s.page_begin) * p.page_size;
  s.tok_end = min((w.kv_end - s.page_begin) * p.page_size, s.kv_len);
  s.num_tiles = s.tok_end > s.tok_begin ? ceil_div(s.tok_end - s.tok_begin, kTile) : 0;
  s.packed_rows = (w.qo_end - w.qo_start) * p.heads;
  return s;
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

// Logical k position (inside a 16-token block of P) of physical token tau: the fp8 PV operand of lane (g, t)
// holds tokens t, t+4, t+8, t+12, which the fragment layout calls k = 2t, 2t+1, 2t+8, 2t+9.
__device__ __forceinline__ int fp8_p_column(int tau) {
  const int r = tau >> 2;
  return 2 * (tau & 3) + r + (r >= 2 ? 6 : 0);
}

// A bf16 pair of Q as the MMA operand: itself for bf16 KV, rounded to fp16 for the fp8 path.
template <bool kFp8>
__device__ __forceinline__ uint32_t q_operand(const uint16_t* q) {
  const uint32_t v = *reinterpret_cast<const uint32_t*>(q);
  if constexpr (kFp8) return dev::pack_f16x2(dev::bf16_lo(v), dev::bf16_hi(v));
  return v;
}

template <bool kFp8, int kGroups, bool kSplitTokens>
__device__ void run_work(const DecodeParams& p, const WorkRow& w, unsigned char* smem) {
  using C = DecodeConfig<kFp8, kGroups, kSplitTokens>;
  constexpr int kJ = C::kWarpTokens / 8;
  const int lane = dev::lane_id(), warp = dev::warp_id();
  const int group = warp / 4, wig = warp % 4;
  const int g = lane >> 2, t = lane & 3;
  const int H = p.heads;

  unsigned char* stages = smem;
  unsigned char* pbuf = smem + C::kStages * C::kStageBytes + group * 16 * C::kPRow;
  float* exchange = reinterpret_cast<float*>(smem + C::kStages * C::kStageBytes + C::kPBytes) + group * 64;

  const WorkSpan span = work_span<C::kTile>(p, w);
  const int kv_len = span.kv_len, page_begin = span.page_begin, q_begin = span.q_begin, qlen = span.qlen;
  const int tok_begin = span.tok_begin, tok_end = span.tok_end, num_tiles = span.num_tiles;
  const int packed_rows = span.packed_rows;
  const float kNegInf = -__int_as_float(0x7f800000);

  for (int m0 = 0; m0 < packed_rows; m0 += C::kRows) {
    const int mrow = kSplitTokens ? m0 : m0 + 16 * group;
    const bool active = mrow < packed_rows;
    // Packed rows g and g+8 of this group: query row (relative to the tile) and head.
    int qrow[2], head[2], limit[2];
    for (int h = 0; h < 2; ++h) {
      const int pr = active ? mrow + g + 8 * h : 0;
      qrow[h] = pr / H;
      head[h] = pr % H;
      // Causal: query token i of the request sees KV tokens [0, kv_len - qlen + i].
      const int i = w.qo_start + qrow[h] - q_begin;
      limit[h] = p.causal ? kv_len - qlen + i : kv_len - 1;
    }
    uint32_t qf[kQkDim / 16][4];
    {
      const uint16_t* q0 = p.q + (static_cast<int64_t>(w.qo_start + qrow[0]) * H + head[0]) * kQkDim;
      const uint16_t* q1 = p.q + (static_cast<int64_t>(w.qo_start + qrow[1]) * H + head[1]) * kQkDim;
#pragma unroll
      for (int ks = 0; ks < kQkDim / 16; ++ks) {
        // Dims of a[0]/a[1] and of a[2]/a[3]; the fp8 path's order matches its K loads (8 bytes per lane).
        const int d0 = kFp8 ? 32 * (ks / 2) + 8 * t + 4 * (ks & 1) : 16 * ks + 2 * t;
        const int d1 = kFp8 ? d0 + 2 : d0 + 8;
        qf[ks][0] = active ? q_operand<kFp8>(q0 + d0) : 0u;
        qf[ks][1] = active ? q_operand<kFp8>(q1 + d0) : 0u;
        qf[ks][2] = active ? q_operand<kFp8>(q0 + d1) : 0u;
        qf[ks][3] = active ? q_operand<kFp8>(q1 + d1) : 0u;
      }
    }
    float o[16][4];
#pragma unroll
    for (int n = 0; n < 16; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m_run[2] = {kNegInf, kNegInf};
    float l_run[2] = {0.f, 0.f};

    TileRows<C> slots;
#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
      if (s < num_tiles) {
        fetch_tile_slots<C>(p, tok_begin + s * C::kTile, tok_end, page_begin, slots);
        issue_kv_tile<C>(p, stages + s * C::kStageBytes, slots);
      }
      dev::copy_async_commit();
    }
    if (C::kStages - 1 < num_tiles)
      fetch_tile_slots<C>(p, tok_begin + (C::kStages - 1) * C::kTile, tok_end, page_begin, slots);

    for (int it = 0; it < num_tiles; ++it) {
      dev::copy_async_wait<C::kStages - 2>();
      __syncthreads();
      {
        const int next = it + C::kStages - 1;
        if (next < num_tiles) {
          issue_kv_tile<C>(p, stages + (next % C::kStages) * C::kStageBytes, slots);
          if (next + 1 < num_tiles)
            fetch_tile_slots<C>(p, tok_begin + (next + 1) * C::kTile, tok_end, page_begin, slots);
        }
        dev::copy_async_commit();
      }
      const unsigned char* kt = stages + (it % C::kStages) * C::kStageBytes;

      // S = Q K^T for this warp's 16 tokens (two n8 tiles). Even and odd k steps accumulate separately, so four
      // independent chains hide the matrix unit's latency.
      // This warp's first token in the tile.
      const int wtok = kSplitTokens ? 32 * group + 8 * wig : 16 * wig;
      float s[kJ][4], s_odd[kJ][4];
#pragma unroll
      for (int j = 0; j < kJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = s_odd[j][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kQkDim / 32; ++kk) {
#pragma unroll
        for (int j = 0; j < kJ; ++j) {
          uint32_t kb[4];
          if constexpr (kFp8) {
            // Token 8j+g, dims 32kk+8t .. +7: two k steps' B fragments in one 8-byte load.
            const uint2 v =
                *reinterpret_cast<const uint2*>(kt + (wtok + 8 * j + g) * C::kStageRow + 32 * kk + 8 * t);
            kb[0] = dev::fp8x2_to_f16x2(v.x);
            kb[1] = dev::fp8x2_to_f16x2(v.x >> 16);
            kb[2] = dev::fp8x2_to_f16x2(v.y);
            kb[3] = dev::fp8x2_to_f16x2(v.y >> 16);
            dev::mma_f16_16816(s[j], qf[2 * kk], kb);
            dev::mma_f16_16816(s_odd[j], qf[2 * kk + 1], kb + 2);
          } else {
            const uint32_t off = (wtok + 8 * j + (lane & 7)) * C::kStageRow + (32 * kk + 8 * (lane >> 3)) * 2;
            dev::ldmatrix_x4(kb, kt, off);
            dev::mma_bf16_16816(s[j], qf[2 * kk], kb);
            dev::mma_bf16_16816(s_odd[j], qf[2 * kk + 1], kb + 2);
          }
        }
      }
#pragma unroll
      for (int j = 0; j < kJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] += s_odd[j][e];

      // Scale, mask, and the row maxima of this tile.
      const int tile_tok = tok_begin + it * C::kTile + wtok;
      float mx[2] = {kNegInf, kNegInf};
#pragma unroll
      for (int j = 0; j < kJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = tile_tok + 8 * j + 2 * t + (e & 1);
          const int h = e >> 1;
          const bool valid = tok < tok_end && tok <= limit[h];
          s[j][e] = valid ? s[j][e] * p.score_scale_log2 : kNegInf;
          mx[h] = fmaxf(mx[h], s[j][e]);
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 1));
        mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 2));
      }
      if (t == 0) {
        exchange[wig * 16 + g] = mx[0];
        exchange[wig * 16 + g + 8] = mx[1];
      }
      __syncthreads();
      float alpha[2], base[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float tm = exchange[g + 8 * h];
#pragma unroll
        for (int k = 1; k < 4; ++k) tm = fmaxf(tm, exchange[k * 16 + g + 8 * h]);
        const float m_new = fmaxf(m_run[h], tm);
        base[h] = m_new == kNegInf ? 0.f : m_new;  // a row with nothing visible yet stays at zero weight
        alpha[h] = dev::exp2_fast(m_run[h] - base[h]);
        m_run[h] = m_new;
      }
      float rs[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < kJ; ++j) {
        const float p0 = dev::exp2_fast(s[j][0] - base[0]), p1 = dev::exp2_fast(s[j][1] - base[0]);
        const float p2 = dev::exp2_fast(s[j][2] - base[1]), p3 = dev::exp2_fast(s[j][3] - base[1]);
        rs[0] += p0 + p1;
        rs[1] += p2 + p3;
        if constexpr (kFp8) {
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
      l_run[0] = l_run[0] * alpha[0] + rs[0];
      l_run[1] = l_run[1] * alpha[1] + rs[1];
#pragma unroll
      for (int n = 0; n < 16; ++n) {
        o[n][0] *= alpha[0];
        o[n][1] *= alpha[0];
        o[n][2] *= alpha[1];
        o[n][3] *= alpha[1];
      }
      __syncthreads();

      // O += P V over this warp's 128 value dims.
      constexpr int kSteps = kSplitTokens ? C::kTile / 32 : C::kTile / 16;  // 16-token steps of this group
      const int ks0 = kSplitTokens ? kSteps * group : 0;
#pragma unroll
      for (int kq = 0; kq < kSteps; ++kq) {
        const int ks = ks0 + kq;
        uint32_t pa[4];
        dev::ldmatrix_x4(pa, pbuf, (lane & 15) * C::kPRow + (16 * ks + 8 * (lane >> 4)) * 2);
        if constexpr (kFp8) {
          // Per 32 value dims: tokens t+4r (r = 0..3) x dims 4g..4g+3, one 4-byte load each; n block 4G+i
          // covers dims 32G + 4n + i (n = 0..7), so lane (g, t) feeds dim 4g+i of each block.
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
              dev::mma_f16_16816(o[4 * G + i], pa, vb);
            }
          }
        } else {
#pragma unroll
          for (int nb = 0; nb < 8; ++nb) {
            uint32_t vb[4];
            const int d0 = 128 * wig + 16 * nb;
            const uint32_t off =
                (16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1)) * C::kStageRow + (d0 + 8 * (lane >> 4)) * 2;
            dev::ldmatrix_x4_trans(vb, kt, off);
            dev::mma_bf16_16816(o[2 * nb], pa, vb);
            dev::mma_bf16_16816(o[2 * nb + 1], pa, vb + 2);
          }
        }
      }
    }
    dev::copy_async_wait<0>();

    // Row sums: the quad's lanes, then the group's four warps (every warp saw the same maxima).
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_run[h] += dev::shfl_xor(l_run[h], 1);
      l_run[h] += dev::shfl_xor(l_run[h], 2);
    }
    __syncthreads();
    if (t == 0) {
      exchange[wig * 16 + g] = l_run[0];
      exchange[wig * 16 + g + 8] = l_run[1];
    }
    __syncthreads();
    float l_tot[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_tot[h] = 0.f;
#pragma unroll
      for (int k = 0; k < 4; ++k) l_tot[h] += exchange[k * 16 + g + 8 * h];
    }
    if constexpr (kSplitTokens) {
      // Group 1 hands its state (row max, row sum, unnormalised O fragments) to group 0 through the stages.
      __syncthreads();
      float* merge = reinterpret_cast<float*>(stages);
      float* merge_rows = merge + 4 * 16 * 4 * 32;
      if (group == 1) {
#pragma unroll
        for (int n = 0; n < 16; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) merge[((wig * 16 + n) * 4 + e) * 32 + lane] = o[n][e];
        if (wig == 0 && t == 0)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            merge_rows[g + 8 * h] = m_run[h];
            merge_rows[16 + g + 8 * h] = l_tot[h];
          }
      }
      __syncthreads();
      if (group == 0) {
        float own[2], other[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float m1 = merge_rows[g + 8 * h];
          const float m_new = fmaxf(m_run[h], m1);
          const float base = m_new == kNegInf ? 0.f : m_new;
          own[h] = exp2f(m_run[h] - base);
          other[h] = exp2f(m1 - base);
          l_tot[h] = l_tot[h] * own[h] + merge_rows[16 + g + 8 * h] * other[h];
          m_run[h] = m_new;
        }
#pragma unroll
        for (int n = 0; n < 16; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            o[n][e] = o[n][e] * own[e >> 1] + merge[((wig * 16 + n) * 4 + e) * 32 + lane] * other[e >> 1];
      }
    }
    float inv[2], lse[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = l_tot[h];
      inv[h] = l > 0.f ? p.out_scale / l : 0.f;
      lse[h] = l > 0.f ? (m_run[h] + log2f(l)) * 0.6931471805599453f : kNegInf;
    }
    if (active && (!kSplitTokens || group == 0)) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // The k-th pair of this lane's values of row h and the first of its two (adjacent) value dims.
        float lo[16], hi[16];
        int dim[16];
#pragma unroll
        for (int k = 0; k < 16; ++k) {
          if constexpr (kFp8) {
            const int n = 4 * (k / 4) + 2 * (k & 1), e = (k >> 1) & 1;
            lo[k] = o[n][2 * h + e] * inv[h];
            hi[k] = o[n + 1][2 * h + e] * inv[h];
            dim[k] = 32 * (k / 4) + 8 * t + 4 * e + 2 * (k & 1);
          } else {
            lo[k] = o[k][2 * h] * inv[h];
            hi[k] = o[k][2 * h + 1] * inv[h];
            dim[k] = 8 * k + 2 * t;
          }
        }
        if (w.partial_qo_loc < 0) {
          uint16_t* dst = p.out + (static_cast<int64_t>(w.qo_start + qrow[h]) * H + head[h]) * kVDim + 128 * wig;
#pragma unroll
          for (int k = 0; k < 16; ++k) *reinterpret_cast<uint32_t*>(dst + dim[k]) = dev::pack_bf16x2(lo[k], hi[k]);
        } else {
          const int64_t prow = static_cast<int64_t>(w.partial_qo_loc + qrow[h]) * H + head[h];
          float* dst = p.partial_out + prow * kVDim + 128 * wig;
#pragma unroll
          for (int k = 0; k < 16; ++k) *reinterpret_cast<float2*>(dst + dim[k]) = make_float2(lo[k], hi[k]);
          if (wig == 0 && t == 0) p.partial_lse[prow] = lse[h];
        }
      }
    }
    __syncthreads();  // the next pass reuses the stages and the exchange buffer
  }
}

}  // namespace mlasim::kernels
