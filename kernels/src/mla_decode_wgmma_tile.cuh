#pragma once
// One work on one workgroup with Hopper warpgroup MMAs (bf16 KV, sm_90a). A pass covers 64 packed rows: Q sits in
// shared memory, KV tiles of 64 tokens stream through two stages, and the two warpgroups have different jobs:
//   warpgroup 0: S = Q K^T (36 wgmma m64n64k16 over 576 dims), the online softmax, P (bf16) and each row's
//     rescale factor to shared memory, then O += P V for value dims [0, 256);
//   warpgroup 1: the KV copies (cp.async, completion tracked by one mbarrier per stage) and O += P V for value
//     dims [256, 512).
// Named barriers hand P over and back and free a stage once both warpgroups are done with it; warpgroup 0 goes
// on to the next tile's QK^T as soon as its own half of PV is done, while warpgroup 1 refills the stage. V is read N-major straight from
// the KV tile; each warpgroup keeps 128 fp32 accumulators per thread.
// A 128-row tile (128 heads) does not fit one SM's registers (O alone is 256 KB), so such plans run two
// workgroups per cluster ("pair"): each takes 64 of the rows, both walk the same KV at the same time, and the
// second read of each KV tile is served by L2.
// Layouts: P uses the no-swizzle layout (8 chunk columns of 1 KB, 8 tokens each; row r, chunk c at
// c*1024 + (r/8)*128 + (r%8)*16). Q and the KV stages use the 128-byte swizzle: nine 8 KB atom columns of 64
// dims, row r's 16-byte chunk j of column a at a*8192 + r*128 + (j ^ r%8)*16, so each 128-byte line of a row
// lands in 128 contiguous bytes (the asynchronous copies stay one request per line) and the same KV bytes serve
// QK^T (K-major) and PV (N-major).
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
  static constexpr int kKvAtom = 64 * 128;          // one 64-dim atom column of 64 rows (Q and KV stages)
  static constexpr int kQBytes = kQkDim / 64 * kKvAtom;      // Q: 64 rows x 576 dims
  static constexpr int kStageBytes = kQkDim / 64 * kKvAtom;  // one KV stage: 64 tokens x 576 dims
  static constexpr int kQOffset = 0;
  static constexpr int kStageOffset = kQBytes;                    // two stages, 1 KB aligned
  static constexpr int kPOffset = kStageOffset + 2 * kStageBytes;  // P: 64 rows x 64 tokens bf16, 8 columns of 1 KB
  static constexpr int kExchangeOffset = kPOffset + 8 * 1024;     // rows' rescale factors and sums
  static constexpr int kBarrierOffset = kExchangeOffset + 2 * 64 * 4;
  static constexpr int kSmemBytes = kBarrierOffset + 2 * 8;       // one mbarrier per stage
  // Named barrier ids (0 is __syncthreads).
  static constexpr int kPFull = 1, kPFree = 2, kStageFree = 3, kSumFull = 4, kSumFree = 5, kQReady = 6;
};

__device__ __forceinline__ int core_offset(int row, int chunk, int column_bytes) {
  return chunk * column_bytes + (row >> 3) * 128 + (row & 7) * 16;
}
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  return (chunk >> 3) * WgmmaDecodeConfig::kKvAtom + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}

#if defined(MLASIM_WGMMA)
// Warpgroup 0's share of the Q block copy (once per pass): thread u copies row u/2, chunks 2k + u%2.
__device__ __forceinline__ void copy_q_rows(unsigned char* block, int u, const DecodeParams& p, const WorkRow& w,
                                            int m0, int packed_rows) {
  const int row = u >> 1, sub = u & 1, pr = m0 + row, H = p.heads;
  const bool valid = pr < packed_rows;
  const int64_t qrow = valid ? w.qo_start + pr / H : 0;
  const auto* src = reinterpret_cast<const unsigned char*>(p.q + (qrow * H + (valid ? pr % H : 0)) * kQkDim);
#pragma unroll
  for (int k = 0; k < kQkDim / 16; ++k) {
    const int c = 2 * k + sub;
    dev::copy_async_16(block + swizzled_offset(row, c), src + 16 * c, valid);
  }
}

// Warpgroup 1's share of a KV tile copy: thread u copies rows (u/32)*4 + (u%32)/8 + 16h (h = 0..3), chunks
// 8k + u%8 (k = 0..8). A warp instruction reads four whole 128-byte lines; a row of 1152 bytes is nine lines.
// The page-table entries are loaded a tile ahead and only used when the copies are issued, so the warp does not
// wait for them in between (a use right after the load would stall it for the load's whole latency).
struct KvCopy {
  int row, sub;
  int page[4], offset[4];  // physical page (-1 past the range) and token offset in it, per row
  __device__ __forceinline__ explicit KvCopy(int u) : row(4 * (u >> 5) + ((u & 31) >> 3)), sub(u & 7) {}
  __device__ __forceinline__ void fetch_slots(const DecodeParams& p, int tok0, int tok_end, int page_begin) {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const int tok = tok0 + row + 16 * h;
      page[h] = tok < tok_end ? p.kv_indices[page_begin + tok / p.page_size] : -1;
      offset[h] = tok % p.page_size;
    }
  }
  __device__ __forceinline__ void issue(unsigned char* stage, const unsigned char* kv, int page_size) const {
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      const int64_t slot = page[h] < 0 ? 0 : static_cast<int64_t>(page[h]) * page_size + offset[h];
      const unsigned char* src = kv + slot * (kQkDim * 2);
#pragma unroll
      for (int k = 0; k < kQkDim / 64; ++k) {
        const int c = 8 * k + sub;
        dev::copy_async_16(stage + swizzled_offset(row + 16 * h, c), src + 16 * c, page[h] >= 0);
      }
    }
  }
};
#endif

// Per-workgroup state that lives across works: the running tile count (stage = seq % 2, mbarrier parity =
// (seq / 2) % 2).
struct WgmmaPipeline {
  uint32_t seq = 0;
};

// Called once per workgroup before its first work: mbarriers and the first "P is free" signal.
__device__ __forceinline__ void wgmma_pipeline_init(unsigned char* smem) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaDecodeConfig;
  auto* bars = reinterpret_cast<uint64_t*>(smem + C::kBarrierOffset);
  if (threadIdx.x == 0) {
    wg::mbarrier_init(&bars[0], 128);
    wg::mbarrier_init(&bars[1], 128);
  }
  __syncthreads();
  if (threadIdx.x >= 128) {
    wg::named_arrive(C::kPFree, 256);
    wg::named_arrive(C::kSumFree, 256);
  }
#else
  (void)smem;
#endif
}

template <int kPair>
__device__ void run_work_wgmma(const DecodeParams& p, const WorkRow& w, unsigned char* smem, int rank,
                               WgmmaPipeline& pipe) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaDecodeConfig;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int wgi = warp >> 2, g = lane >> 2, t = lane & 3, u = tid & 127;
  const int r0 = 16 * (warp & 3) + g;  // accumulator rows r0 and r0 + 8 of the pass
  unsigned char* qs = smem + C::kQOffset;
  unsigned char* stages = smem + C::kStageOffset;
  unsigned char* ps = smem + C::kPOffset;
  float* xalpha = reinterpret_cast<float*>(smem + C::kExchangeOffset);  // rows' rescale factors of a tile
  float* xsum = xalpha + 64;                                            // rows' softmax sums at the end
  auto* bars = reinterpret_cast<uint64_t*>(smem + C::kBarrierOffset);
  const float kNegInf = -__int_as_float(0x7f800000);

  const int H = p.heads;
  const WorkSpan span = work_span<C::kTile>(p, w);
  const int kv_len = span.kv_len, page_begin = span.page_begin, q_begin = span.q_begin, qlen = span.qlen;
  const int tok_begin = span.tok_begin, tok_end = span.tok_end, num_tiles = span.num_tiles;
  const int packed_rows = span.packed_rows;

  for (int m0 = C::kRows * rank; m0 < packed_rows; m0 += C::kRows * kPair) {
    const uint32_t seq0 = pipe.seq;
    pipe.seq += num_tiles;
    float o[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) o[i] = 0.f;

    if (wgi == 1) {
      // Copies and PV for value dims [256, 512).
      const uint64_t pdesc = wg::smem_desc(ps, 1024, 128);
      KvCopy copy(u);
      // Both stages are free here: every earlier tile's stage was released before its successor was issued.
      for (int it = 0; it < min(num_tiles, 2); ++it) {
        const uint32_t q = seq0 + it;
        copy.fetch_slots(p, tok_begin + it * C::kTile, tok_end, page_begin);
        copy.issue(stages + (q & 1) * C::kStageBytes, p.kv, p.page_size);
        wg::arrive_when_copies_land(&bars[q & 1]);
      }
      if (num_tiles > 2) copy.fetch_slots(p, tok_begin + 2 * C::kTile, tok_end, page_begin);
      for (int it = 0; it < num_tiles; ++it) {
        const uint32_t q = seq0 + it;
        const unsigned char* kt = stages + (q & 1) * C::kStageBytes;
        const uint64_t vdesc = wg::smem_desc(kt + 4 * C::kKvAtom, C::kKvAtom, 1024, true);  // dims [256, 512)
        wg::named_sync(C::kPFull, 256);
        wg::fence_shared_for_async();
        const float a0 = xalpha[r0], a1 = xalpha[r0 + 8];
        if (a0 != 1.f || a1 != 1.f) {
#pragma unroll
          for (int i = 0; i < 128; ++i) o[i] *= (i & 2) ? a1 : a0;
        }
        wg::fence();
#pragma unroll
        for (int kk = 0; kk < C::kTile / 16; ++kk)
          wg::mma_m64n256k16_b_nmajor(o, wg::desc_advance(pdesc, kk * 2048),
                                      wg::desc_advance(vdesc, kk * 16 * 128), 1);
        wg::commit();
        wg::wait<0>();
        wg::pin(o);
        // Stage first, then P: warpgroup 0 cannot reach its next stage release before taking the next P, so the
        // two signals of one barrier never run into each other.
        wg::named_sync(C::kStageFree, 256);  // warpgroup 0 is done with this stage too
        wg::named_arrive(C::kPFree, 256);
        if (it + 2 < num_tiles) {
          copy.issue(stages + (q & 1) * C::kStageBytes, p.kv, p.page_size);
          wg::arrive_when_copies_land(&bars[q & 1]);
          if (it + 3 < num_tiles) copy.fetch_slots(p, tok_begin + (it + 3) * C::kTile, tok_end, page_begin);
        }
      }
      wg::named_sync(C::kSumFull, 256);
    } else {
      // Q, QK^T, softmax and PV for value dims [0, 256).
      copy_q_rows(qs, u, p, w, m0, packed_rows);
      dev::copy_async_commit();
      int limit[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int pr = min(m0 + r0 + 8 * h, packed_rows - 1);
        const int i = w.qo_start + pr / H - q_begin;  // query token of the request; it sees [0, kv_len - qlen + i]
        limit[h] = p.causal ? kv_len - qlen + i : kv_len - 1;
      }
      float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.f, 0.f};
      const uint64_t qdesc = wg::smem_desc(qs, 16, 1024, true);  // K-major, swizzled like the KV stages
      const uint64_t pdesc = wg::smem_desc(ps, 1024, 128);
      dev::copy_async_wait<0>();
      wg::fence_shared_for_async();
      wg::named_sync(C::kQReady, 128);
      const float scale = p.score_scale_log2;
      for (int it = 0; it < num_tiles; ++it) {
        const uint32_t q = seq0 + it;
        const unsigned char* kt = stages + (q & 1) * C::kStageBytes;
        const uint64_t kdesc = wg::smem_desc(kt, 16, 1024, true);                  // K-major, swizzled
        const uint64_t vdesc = wg::smem_desc(kt, C::kKvAtom, 1024, true);          // N-major, swizzled
        wg::mbarrier_wait(&bars[q & 1], (q >> 1) & 1);
        wg::fence_shared_for_async();

        float s[32];
        wg::fence();
#pragma unroll
        for (int ks = 0; ks < kQkDim / 16; ++ks)
          wg::mma_m64n64k16(s, wg::desc_advance(qdesc, (ks >> 2) * C::kKvAtom + (ks & 3) * 32),
                            wg::desc_advance(kdesc, (ks >> 2) * C::kKvAtom + (ks & 3) * 32), ks > 0);
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
        float alpha[2], nbase[2];
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
        float pw[32];
        float rs[2] = {0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 32; ++i) {
          pw[i] = dev::exp2_fast(fmaf(s[i], scale, nbase[(i >> 1) & 1]));
          rs[(i >> 1) & 1] += pw[i];
        }
        l_run[0] = l_run[0] * alpha[0] + rs[0];
        l_run[1] = l_run[1] * alpha[1] + rs[1];
        wg::named_sync(C::kPFree, 256);  // warpgroup 1 is done with the previous P
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          unsigned char* dst = ps + core_offset(r0, j, 1024) + 4 * t;
          *reinterpret_cast<uint32_t*>(dst) = dev::pack_bf16x2(pw[4 * j], pw[4 * j + 1]);
          *reinterpret_cast<uint32_t*>(dst + 128) = dev::pack_bf16x2(pw[4 * j + 2], pw[4 * j + 3]);
        }
        if (t == 0) {
          xalpha[r0] = alpha[0];
          xalpha[r0 + 8] = alpha[1];
        }
        wg::fence_shared_for_async();
        wg::named_arrive(C::kPFull, 256);
        if (alpha[0] != 1.f || alpha[1] != 1.f) {
#pragma unroll
          for (int i = 0; i < 128; ++i) o[i] *= alpha[(i >> 1) & 1];
        }
        wg::fence();
#pragma unroll
        for (int kk = 0; kk < C::kTile / 16; ++kk)
          wg::mma_m64n256k16_b_nmajor(o, wg::desc_advance(pdesc, kk * 2048), wg::desc_advance(vdesc, kk * 16 * 128),
                                      1);
        wg::commit();
        wg::wait<0>();
        wg::pin(o);
        wg::named_arrive(C::kStageFree, 256);
      }
      // Row sums over the quad, handed to warpgroup 1 with the end of the pass.
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        l_run[h] += dev::shfl_xor(l_run[h], 1);
        l_run[h] += dev::shfl_xor(l_run[h], 2);
      }
      wg::named_sync(C::kSumFree, 256);
      if (t == 0) {
        xsum[r0] = l_run[0];
        xsum[r0 + 8] = l_run[1];
      }
      wg::named_arrive(C::kSumFull, 256);
      // LSE of split tiles (warpgroup 0 holds the running maxima).
      if (w.partial_qo_loc >= 0 && t == 0) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int pr = m0 + r0 + 8 * h;
          if (pr >= packed_rows) continue;
          const int64_t prow = (w.partial_qo_loc + pr / H) * static_cast<int64_t>(H) + pr % H;
          p.partial_lse[prow] = l_run[h] > 0.f ? (m_run[h] + log2f(l_run[h])) * 0.6931471805599453f : kNegInf;
        }
      }
    }

    // Both warpgroups: normalise and write their 256 value dims.
    float l[2] = {xsum[r0], xsum[r0 + 8]};
    if (wgi == 1) wg::named_arrive(C::kSumFree, 256);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int pr = m0 + r0 + 8 * h;
      if (pr >= packed_rows) continue;
      const float inv = l[h] > 0.f ? p.out_scale / l[h] : 0.f;
      const int64_t qrow = pr / H, head = pr % H;
      if (w.partial_qo_loc < 0) {
        uint16_t* dst = p.out + ((w.qo_start + qrow) * H + head) * kVDim + 256 * wgi + 2 * t;
#pragma unroll
        for (int j = 0; j < 32; ++j)
          *reinterpret_cast<uint32_t*>(dst + 8 * j) = dev::pack_bf16x2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
      } else {
        float* dst = p.partial_out + ((w.partial_qo_loc + qrow) * H + head) * kVDim + 256 * wgi + 2 * t;
#pragma unroll
        for (int j = 0; j < 32; ++j)
          *reinterpret_cast<float2*>(dst + 8 * j) = make_float2(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
      }
    }
  }
#else
  (void)p, (void)w, (void)smem, (void)rank, (void)pipe;
#endif
}

}  // namespace mlasim::kernels
