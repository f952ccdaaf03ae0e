#pragma once
// One work on one workgroup with Hopper warpgroup MMAs (bf16 KV, sm_90a). A pass covers 64 packed rows: Q sits in
// shared memory, KV tiles of 64 tokens stream through two cp.async stages, and two warpgroups share the tile:
//   S = Q K^T on warpgroup 0 (36 wgmma m64n64k16 over 576 dims), which keeps the online softmax, writes P (bf16)
//   to shared memory and hands each row's rescale factor to warpgroup 1;
//   O += P V: warpgroup w owns value dims [256w, 256w+256) for all 64 rows (4 wgmma m64n256k16, V read N-major
//   straight from the KV tile), 128 fp32 accumulators per thread.
// A 128-row tile (128 heads) does not fit one SM's registers (O alone is 256 KB), so such plans run two
// workgroups per cluster ("pair"): each takes 64 of the rows, both walk the same KV at the same time, and the
// second read of each KV tile is served by L2.
// Layouts: Q and P use the no-swizzle layout (a 64-row block of 576 dims is 72 chunk columns of 1 KB, 8 dims
// each; row r, chunk c at c*1024 + (r/8)*128 + (r%8)*16). KV stages use the 128-byte swizzle: nine 8 KB atom
// columns of 64 dims, row r's 16-byte chunk j of column a at a*8192 + r*128 + (j ^ r%8)*16, so each 128-byte
// line of a KV row lands in 128 contiguous bytes (the asynchronous copies stay one request per line) and the
// same bytes serve QK^T (K-major) and PV (N-major).
#include <cstdint>

#include "device_primitives.cuh"
#include "mla_decode_tile.cuh"
#include "mla_params.h"
#include "wgmma_primitives.cuh"

namespace mlasim::kernels {

struct WgmmaDecodeConfig {
  static constexpr int kRows = 64;     // packed rows per workgroup and pass
  static constexpr int kTile = 64;     // KV tokens per stage
  static constexpr int kThreads = 256; // two warpgroups
  static constexpr int kQColumn = 1024;             // Q: chunk-column stride (no swizzle)
  static constexpr int kKvAtom = 64 * 128;          // KV stage: one 64-dim atom column of 64 rows
  static constexpr int kQBytes = kQkDim / 8 * kQColumn;
  static constexpr int kStageBytes = kQkDim / 64 * kKvAtom;
  static constexpr int kQOffset = 0;
  static constexpr int kStageOffset = kQBytes;                    // two stages, 1 KB aligned
  static constexpr int kPOffset = kStageOffset + 2 * kStageBytes;  // P: 64 rows x 64 tokens bf16, 8 columns of 1 KB
  static constexpr int kExchangeOffset = kPOffset + 8 * 1024;
  static constexpr int kSmemBytes = kExchangeOffset + 2 * 64 * 4;  // rows' rescale factors and sums
};

__device__ __forceinline__ int core_offset(int row, int chunk, int column_bytes) {
  return chunk * column_bytes + (row >> 3) * 128 + (row & 7) * 16;
}
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  return (chunk >> 3) * WgmmaDecodeConfig::kKvAtom + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}

#if defined(MLASIM_WGMMA)
// KV slot of token `tok` of the work's request, -1 past the range.
__device__ __forceinline__ int64_t kv_slot(const DecodeParams& p, int tok, int tok_end, int page_begin) {
  return tok < tok_end ? static_cast<int64_t>(p.kv_indices[page_begin + tok / p.page_size]) * p.page_size +
                             tok % p.page_size
                       : -1;
}

// This thread's share of the Q block copy (once per pass): row `row`, chunks 4k + sub (k = 0..17).
__device__ __forceinline__ void copy_q_row(unsigned char* block, int row, int sub, const unsigned char* src,
                                           bool valid) {
#pragma unroll
  for (int k = 0; k < kQkDim / 32; ++k) {
    const int c = 4 * k + sub;
    dev::copy_async_16(block + core_offset(row, c, WgmmaDecodeConfig::kQColumn), src + 16 * c, valid);
  }
}

// This thread's share of a KV tile copy: rows `row` and `row` + 32, chunks 8k + sub (k = 0..8). A warp
// instruction reads four whole 128-byte lines (four rows x eight chunks); a row of 1152 bytes is nine lines.
__device__ __forceinline__ void copy_kv_rows(unsigned char* stage, int row, int sub, const unsigned char* kv,
                                             const int64_t (&slot)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const unsigned char* src = kv + (slot[h] < 0 ? 0 : slot[h]) * (kQkDim * 2);
#pragma unroll
    for (int k = 0; k < kQkDim / 64; ++k) {
      const int c = 8 * k + sub;
      dev::copy_async_16(stage + swizzled_offset(row + 32 * h, c), src + 16 * c, slot[h] >= 0);
    }
  }
}

// Slots of this thread's two rows of the tile starting at token tok0.
__device__ __forceinline__ void kv_slots(const DecodeParams& p, int tok0, int row, int tok_end, int page_begin,
                                         int64_t (&slot)[2]) {
  slot[0] = kv_slot(p, tok0 + row, tok_end, page_begin);
  slot[1] = kv_slot(p, tok0 + row + 32, tok_end, page_begin);
}
#endif

template <int kPair>
__device__ void run_work_wgmma(const DecodeParams& p, const WorkRow& w, unsigned char* smem, int rank) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaDecodeConfig;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wgi = warp >> 2, g = lane >> 2, t = lane & 3;
  const int r0 = 16 * (warp & 3) + g;  // accumulator rows r0 and r0 + 8 of the pass
  const int copy_row = 8 * warp + (lane & 7), copy_sub = lane >> 3;  // Q block copy
  const int kv_row = 4 * warp + (lane >> 3), kv_sub = lane & 7;       // KV tile copy
  unsigned char* qs = smem + C::kQOffset;
  unsigned char* stages = smem + C::kStageOffset;
  unsigned char* ps = smem + C::kPOffset;
  float* xalpha = reinterpret_cast<float*>(smem + C::kExchangeOffset);  // rows' rescale factors of a tile
  float* xsum = xalpha + 64;                                            // rows' softmax sums at the end
  const float kNegInf = -__int_as_float(0x7f800000);

  const int b = w.batch_idx, H = p.heads;
  const int kv_len = p.batch_kv_len[b], page_begin = p.batch_kv_page_begin[b];
  const int q_begin = p.batch_q_begin[b], qlen = p.batch_qlen[b];
  const int tok_begin = (w.kv_start - page_begin) * p.page_size;
  const int tok_end = min((w.kv_end - page_begin) * p.page_size, kv_len);
  const int num_tiles = tok_end > tok_begin ? ceil_div(tok_end - tok_begin, C::kTile) : 0;
  const int packed_rows = (w.qo_end - w.qo_start) * H;
  const auto* kv = p.kv;

  for (int m0 = C::kRows * rank; m0 < packed_rows; m0 += C::kRows * kPair) {
    {
      const int pr = m0 + copy_row;
      const bool valid = pr < packed_rows;
      const int64_t qrow = valid ? w.qo_start + pr / H : 0;
      const auto* src = reinterpret_cast<const unsigned char*>(p.q + (qrow * H + (valid ? pr % H : 0)) * kQkDim);
      copy_q_row(qs, copy_row, copy_sub, src, valid);
    }
    int64_t slot[2];
    if (num_tiles > 0) {
      kv_slots(p, tok_begin, kv_row, tok_end, page_begin, slot);
      copy_kv_rows(stages, kv_row, kv_sub, kv, slot);
    }
    dev::copy_async_commit();
    if (num_tiles > 1) kv_slots(p, tok_begin + C::kTile, kv_row, tok_end, page_begin, slot);

    int limit[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int pr = min(m0 + r0 + 8 * h, packed_rows - 1);
      const int i = w.qo_start + pr / H - q_begin;  // query token of the request; it sees [0, kv_len - qlen + i]
      limit[h] = p.causal ? kv_len - qlen + i : kv_len - 1;
    }
    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.f;
    float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.f, 0.f};

    for (int it = 0; it < num_tiles; ++it) {
      if (it + 1 < num_tiles) {
        copy_kv_rows(stages + ((it + 1) & 1) * C::kStageBytes, kv_row, kv_sub, kv, slot);
        dev::copy_async_commit();
        if (it + 2 < num_tiles) kv_slots(p, tok_begin + (it + 2) * C::kTile, kv_row, tok_end, page_begin, slot);
        dev::copy_async_wait<1>();
      } else {
        dev::copy_async_wait<0>();
      }
      wg::fence_shared_for_async();
      __syncthreads();
      const unsigned char* kt = stages + (it & 1) * C::kStageBytes;

      // S = Q K^T for the tile's 64 tokens on warpgroup 0 (Q is read once per tile; splitting the tokens between
      // the warpgroups would read it twice), then its online softmax: P to shared memory, the rows' rescale
      // factors to the other warpgroup.
      float alpha[2];
      if (wgi == 0) {
        float s[32];
        wg::fence();
#pragma unroll
        for (int ks = 0; ks < kQkDim / 16; ++ks)
          wg::mma_m64n64k16(s, wg::smem_desc(qs + ks * 2 * C::kQColumn, C::kQColumn, 128),
                            wg::smem_desc(kt + (ks >> 2) * C::kKvAtom + (ks & 3) * 32, 16, 1024, true), ks > 0);
        wg::commit();
        wg::wait<0>();
        wg::pin(s);

        // Mask, row maxima, weights; accumulator i holds row r0 + 8 (i/2 % 2), token 8 (i/4) + 2t + i%2. Tiles
        // wholly inside both rows' visible range skip the mask; the scale (> 0) is applied inside the exponent.
        const int tok0 = tok_begin + it * C::kTile;
        float mx[2] = {kNegInf, kNegInf};
        if (tok0 + C::kTile <= tok_end && tok0 + C::kTile - 1 <= min(limit[0], limit[1])) {
#pragma unroll
          for (int i = 0; i < 32; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
        } else {
#pragma unroll
          for (int i = 0; i < 32; ++i) {
            const int h = (i >> 1) & 1;
            const int tok = tok0 + 8 * (i >> 2) + 2 * t + (i & 1);
            s[i] = tok < tok_end && tok <= limit[h] ? s[i] : kNegInf;
            mx[h] = fmaxf(mx[h], s[i]);
          }
        }
        const float scale = p.score_scale_log2;
        float nbase[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 1));
          mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 2));
          const float m_new = fmaxf(m_run[h], mx[h] * scale);
          const float base = m_new == kNegInf ? 0.f : m_new;  // a row with nothing visible yet keeps zero weight
          alpha[h] = dev::exp2_fast(m_run[h] - base);
          nbase[h] = -base;
          m_run[h] = m_new;
        }
        float rs[2] = {0.f, 0.f};
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float p0 = dev::exp2_fast(fmaf(s[4 * j], scale, nbase[0]));
          const float p1 = dev::exp2_fast(fmaf(s[4 * j + 1], scale, nbase[0]));
          const float p2 = dev::exp2_fast(fmaf(s[4 * j + 2], scale, nbase[1]));
          const float p3 = dev::exp2_fast(fmaf(s[4 * j + 3], scale, nbase[1]));
          rs[0] += p0 + p1;
          rs[1] += p2 + p3;
          unsigned char* dst = ps + core_offset(r0, j, 1024) + 4 * t;
          *reinterpret_cast<uint32_t*>(dst) = dev::pack_bf16x2(p0, p1);
          *reinterpret_cast<uint32_t*>(dst + 128) = dev::pack_bf16x2(p2, p3);
        }
        l_run[0] = l_run[0] * alpha[0] + rs[0];
        l_run[1] = l_run[1] * alpha[1] + rs[1];
        if (t == 0) {
          xalpha[r0] = alpha[0];
          xalpha[r0 + 8] = alpha[1];
        }
      }
      wg::fence_shared_for_async();
      __syncthreads();
      if (wgi == 1) {
        alpha[0] = xalpha[r0];
        alpha[1] = xalpha[r0 + 8];
      }
      // Once the maxima settle the factors are 1 and the rescale is skipped.
      if (alpha[0] != 1.f || alpha[1] != 1.f) {
#pragma unroll
        for (int i = 0; i < 128; ++i) o[i] *= alpha[(i >> 1) & 1];
      }

      // O += P V for value dims [256 wgi, 256 wgi + 256): V is the tile's first 512 dims, N-major.
      wg::fence();
#pragma unroll
      for (int kk = 0; kk < C::kTile / 16; ++kk)
        wg::mma_m64n256k16_b_nmajor(o, wg::smem_desc(ps + kk * 2048, 1024, 128),
                                    wg::smem_desc(kt + 4 * wgi * C::kKvAtom + kk * 16 * 128, C::kKvAtom, 1024, true),
                                    1);
      wg::commit();
      wg::wait<0>();
      wg::pin(o);
      __syncthreads();  // the stage and P are free for the next tile
    }
    dev::copy_async_wait<0>();

    // Row sums (warpgroup 0 saw every token): the quad, then shared with warpgroup 1.
    if (wgi == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l_run[h] += dev::shfl_xor(l_run[h], 1);
        l_run[h] += dev::shfl_xor(l_run[h], 2);
      }
      if (t == 0) {
        xsum[r0] = l_run[0];
        xsum[r0 + 8] = l_run[1];
      }
    }
    __syncthreads();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r0 + 8 * h, pr = m0 + r;
      if (pr >= packed_rows) continue;
      const float l = xsum[r];
      const float inv = l > 0.f ? p.out_scale / l : 0.f;
      const int64_t qrow = pr / H, head = pr % H;
      if (w.partial_qo_loc < 0) {
        uint16_t* dst = p.out + ((w.qo_start + qrow) * H + head) * kVDim + 256 * wgi + 2 * t;
#pragma unroll
        for (int j = 0; j < 32; ++j)
          *reinterpret_cast<uint32_t*>(dst + 8 * j) = dev::pack_bf16x2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
      } else {
        const int64_t prow = (w.partial_qo_loc + qrow) * H + head;
        float* dst = p.partial_out + prow * kVDim + 256 * wgi + 2 * t;
#pragma unroll
        for (int j = 0; j < 32; ++j)
          *reinterpret_cast<float2*>(dst + 8 * j) = make_float2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
        if (wgi == 0 && t == 0) p.partial_lse[prow] = l > 0.f ? (m_run[h] + log2f(l)) * 0.6931471805599453f : kNegInf;
      }
    }
    __syncthreads();  // the next pass reuses Q, the stages and the exchange buffer
  }
#else
  (void)p, (void)w, (void)smem, (void)rank;
#endif
}

}  // namespace mlasim::kernels
