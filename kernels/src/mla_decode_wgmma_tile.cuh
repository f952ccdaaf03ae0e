#pragma once
// One work on one workgroup with Hopper warpgroup MMAs (bf16 KV, sm_90a). A pass covers 64 packed rows: Q sits in
// shared memory, KV tiles of 64 tokens stream through two stages, and the two warpgroups have different jobs:
//   warpgroup 0: S = Q K^T (36 wgmma m64n64k16 over 576 dims), the online softmax, P (bf16) and each row's
//     rescale factor to shared memory, then O += P V for value dims [0, 256);
//   warpgroup 1: the KV copies (cp.async, completion tracked by one mbarrier per stage) and O += P V for value
//     dims [256, 512).
// Named barriers hand P over and back and free a stage once both warpgroups are done with it; warpgroup 0 goes
// on to the next tile's QK^T as soon as its own half of PV is done, while warpgroup 1 refills the stage. V is
// read N-major straight from the KV tile; each warpgroup keeps 128 fp32 accumulators per thread.
// A 128-row tile (128 heads) does not fit one SM's registers (O alone is 256 KB), so such plans run two
// workgroups per cluster ("pair"): each takes 64 of the rows, both walk the same KV at the same time, and the
// second read of each KV tile is served by L2.
// Layouts (WgmmaSmem): P uses the no-swizzle layout (8 chunk columns of 1 KB, 8 tokens each). Q and the KV stages
// use the 128-byte swizzle in nine 8 KB columns of 64 dims, so each 128-byte line of a row lands in 128
// contiguous bytes (the asynchronous copies stay one request per line) and the same KV bytes serve QK^T
// (K-major) and PV (N-major).
// Phases of a pass: warpgroup 0 runs stage_q, then per tile qk_scores, softmax_step and pv_accumulate, and
// merge_row_sums at the end; warpgroup 1 runs the copies and pv_accumulate; both run store_output.
#include <cstdint>

#include "accum_fragment.cuh"
#include "device_primitives.cuh"
#include "mla_output.cuh"
#include "mla_params.h"
#include "mla_work.cuh"
#include "online_softmax.cuh"
#include "smem_swizzle.cuh"
#include "wgmma_primitives.cuh"
#include "work_stamps.cuh"

namespace mlasim::kernels {

struct WgmmaDecodeConfig {
  static constexpr int kRows = 64;      // packed rows per workgroup and pass
  static constexpr int kTile = 64;      // KV tokens per stage
  static constexpr int kThreads = 256;  // two warpgroups
  // Named barrier ids (0 is __syncthreads).
  static constexpr int kPFull = 1, kPFree = 2, kStageFree = 3, kSumFull = 4, kSumFree = 5, kQReady = 6;
};

// Shared memory of the bf16 Hopper kernel (229.9 KB), and where each part starts.
struct WgmmaSmem {
  static constexpr int kColumnBytes = 64 * 128;  // one 64-dim column of 64 rows in the 128-byte swizzle
  static constexpr int kQOffset = 0;
  static constexpr int kQBytes = kQkDim / 64 * kColumnBytes;  // Q: 64 rows x 576 dims
  static constexpr int kStages = 2;
  static constexpr int kStageOffset = kQOffset + kQBytes;
  static constexpr int kStageBytes = kQkDim / 64 * kColumnBytes;  // one KV tile: 64 tokens x 576 dims
  static constexpr int kPOffset = kStageOffset + kStages * kStageBytes;
  static constexpr int kPColumnBytes = 1024;  // P: 64 rows x 64 tokens bf16, 8 no-swizzle columns of 8 tokens
  static constexpr int kPBytes = 8 * kPColumnBytes;
  static constexpr int kAlphaOffset = kPOffset + kPBytes;     // the rows' rescale factors of the current tile
  static constexpr int kSumOffset = kAlphaOffset + 64 * 4;    // the rows' softmax sums at the end of a pass
  static constexpr int kBarrierOffset = kSumOffset + 64 * 4;  // one mbarrier per stage: its copies landed
  static constexpr int kBytes = kBarrierOffset + kStages * 8;
  static_assert(kStageOffset % 1024 == 0 && kStageBytes % 1024 == 0 && kPOffset % 1024 == 0,
                "swizzled operands need 1 KB alignment");

  unsigned char* base;
  __device__ __forceinline__ unsigned char* q() const { return base + kQOffset; }
  __device__ __forceinline__ unsigned char* stage(int s) const { return base + kStageOffset + s * kStageBytes; }
  __device__ __forceinline__ unsigned char* p() const { return base + kPOffset; }
  __device__ __forceinline__ float* row_alpha() const { return reinterpret_cast<float*>(base + kAlphaOffset); }
  __device__ __forceinline__ float* row_sum() const { return reinterpret_cast<float*>(base + kSumOffset); }
  __device__ __forceinline__ uint64_t* stage_full() const { return reinterpret_cast<uint64_t*>(base + kBarrierOffset); }
};

// Chunk `chunk` (16 bytes) of row `row` of Q or a KV stage.
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  return swizzle128_chunk_offset<WgmmaSmem::kColumnBytes>(row, chunk);
}

// Accumulators of a warpgroup: S (64 rows x 64 tokens) and its half of O (64 rows x 256 value dims). Register i
// of thread (warp w, g, t) is row 16w + AccumFragment::row(i, g) of the pass; its column is the token, or the
// value dim from 256 x warpgroup on.
using ScoreAccum = AccumFragment<32>;
using OutAccum = AccumFragment<128>;

// A thread's place: its warpgroup, its index in the warpgroup, and its fragment coordinates; r0 is the
// accumulator row of register half 0 (half 1 is r0 + 8).
struct WgmmaLane {
  int wgi, u, g, t, r0;
  __device__ __forceinline__ WgmmaLane() {
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    wgi = warp >> 2;
    g = lane >> 2;
    t = lane & 3;
    u = tid & 127;
    r0 = 16 * (warp & 3) + g;
  }
};

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
__device__ __forceinline__ void wgmma_pipeline_init(unsigned char* smem_base) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaDecodeConfig;
  uint64_t* bars = WgmmaSmem{smem_base}.stage_full();
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
  (void)smem_base;
#endif
}

#if defined(MLASIM_WGMMA)
// Stage Q: warpgroup 0 copies the pass's 64 rows into the swizzled Q block and waits until all of them landed.
__device__ __forceinline__ void stage_q(const WgmmaSmem& smem, const DecodeParams& p, const WorkRow& w, int m0,
                                        int packed_rows, const WgmmaLane& L) {
  copy_q_rows(smem.q(), L.u, p, w, m0, packed_rows);
  dev::copy_async_commit();
  dev::copy_async_wait<0>();
  wg::fence_shared_for_async();
  wg::named_sync(WgmmaDecodeConfig::kQReady, 128);
}

// QK^T: S = Q K^T for the pass's 64 rows and the tile's 64 tokens (36 wgmma over 576 dims; Q is read once).
__device__ __forceinline__ void qk_scores(ScoreAccum& s, uint64_t qdesc, uint64_t kdesc) {
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < kQkDim / 16; ++ks)
    wg::mma_m64n64k16(s.v, wg::desc_advance(qdesc, (ks >> 2) * WgmmaSmem::kColumnBytes + (ks & 3) * 32),
                      wg::desc_advance(kdesc, (ks >> 2) * WgmmaSmem::kColumnBytes + (ks & 3) * 32), ks > 0);
  wg::commit();
  wg::wait<0>();
  wg::pin(s.v);
}

// Rescales the accumulators of rows r0 and r0 + 8, skipped once the row maxima have settled.
__device__ __forceinline__ void rescale_if_moved(OutAccum& o, float a0, float a1) {
  if (a0 != 1.f || a1 != 1.f) o.scale_rows(a0, a1);
}

// Softmax step of one tile (warpgroup 0): mask (only on tiles that reach a row's visible limit), the rows'
// maxima over the quad, the running maxima and sums, then P (bf16) and each row's rescale factor to shared
// memory for warpgroup 1 once it has taken the previous P, and the rescale of warpgroup 0's own accumulators.
// The scale (> 0) is applied inside the exponent.
__device__ __forceinline__ void softmax_step(ScoreAccum& s, OnlineSoftmax<2>& sm, OutAccum& o, const WgmmaSmem& smem,
                                             int tok0, int tok_end, const int (&limit)[2], float scale,
                                             const WgmmaLane& L) {
  using C = WgmmaDecodeConfig;
  float mx[2] = {neg_inf(), neg_inf()};
  if (tok0 + C::kTile <= tok_end && tok0 + C::kTile - 1 <= min(limit[0], limit[1])) {
#pragma unroll
    for (int i = 0; i < 32; ++i) mx[ScoreAccum::half(i)] = fmaxf(mx[ScoreAccum::half(i)], s[i]);
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int h = ScoreAccum::half(i);
      const int tok = tok0 + ScoreAccum::column(i, L.t);
      s[i] = tok < tok_end && tok <= limit[h] ? s[i] : neg_inf();
      mx[h] = fmaxf(mx[h], s[i]);
    }
  }
  float alpha[2], nbase[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 1));
    mx[h] = fmaxf(mx[h], dev::shfl_xor(mx[h], 2));
    float base;
    alpha[h] = sm.advance_max(h, mx[h] * scale, base);
    nbase[h] = -base;
  }
  float pw[32];
  float rs[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    pw[i] = dev::exp2_fast(fmaf(s[i], scale, nbase[ScoreAccum::half(i)]));
    rs[ScoreAccum::half(i)] += pw[i];
  }
  sm.l[0] = sm.l[0] * alpha[0] + rs[0];
  sm.l[1] = sm.l[1] * alpha[1] + rs[1];
  wg::named_sync(C::kPFree, 256);  // warpgroup 1 is done with the previous P
  unsigned char* ps = smem.p();
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    // Tokens 8j + 2t, 2t + 1 of rows r0 and r0 + 8: chunk j of the no-swizzle layout.
    unsigned char* dst = ps + core_matrix_offset(L.r0, j, WgmmaSmem::kPColumnBytes) + 4 * L.t;
    *reinterpret_cast<uint32_t*>(dst) =
        dev::pack_bf16x2(pw[ScoreAccum::index(j, 0, 0)], pw[ScoreAccum::index(j, 0, 1)]);
    *reinterpret_cast<uint32_t*>(dst + 128) =
        dev::pack_bf16x2(pw[ScoreAccum::index(j, 1, 0)], pw[ScoreAccum::index(j, 1, 1)]);
  }
  if (L.t == 0) {
    smem.row_alpha()[L.r0] = alpha[0];
    smem.row_alpha()[L.r0 + 8] = alpha[1];
  }
  wg::fence_shared_for_async();
  wg::named_arrive(C::kPFull, 256);
  rescale_if_moved(o, alpha[0], alpha[1]);
}

// PV: O += P V for this warpgroup's 256 value dims of the tile (4 wgmma m64n256k16, V N-major from the stage).
__device__ __forceinline__ void pv_accumulate(OutAccum& o, uint64_t pdesc, uint64_t vdesc) {
  wg::fence();
#pragma unroll
  for (int kk = 0; kk < WgmmaDecodeConfig::kTile / 16; ++kk)
    wg::mma_m64n256k16_b_nmajor(o.v, wg::desc_advance(pdesc, kk * 2048), wg::desc_advance(vdesc, kk * 16 * 128), 1);
  wg::commit();
  wg::wait<0>();
  wg::pin(o.v);
}

// Warpgroup 1's pass: every KV copy of the work's tiles, and PV for value dims [256, 512) of each tile once
// warpgroup 0 has handed over P and the rows' rescale factors.
// `first_kv` (instrumented runs, the work's first pass): stamped when the first tile's copies are issued.
__device__ __forceinline__ void copy_and_pv_upper(const DecodeParams& p, const WgmmaSmem& smem, const WorkSpan& span,
                                                  uint32_t seq0, OutAccum& o, const WgmmaLane& L, WorkStamp* first_kv) {
  using C = WgmmaDecodeConfig;
  uint64_t* bars = smem.stage_full();
  const uint64_t pdesc = wg::smem_desc(smem.p(), 1024, 128);
  KvCopy copy(L.u);
  // Both stages are free here: every earlier tile's stage was released before its successor was issued.
  for (int it = 0; it < min(span.num_tiles, 2); ++it) {
    const uint32_t q = seq0 + it;
    copy.fetch_slots(p, span.tok_begin + it * C::kTile, span.tok_end, span.page_begin);
    copy.issue(smem.stage(q & 1), p.kv, p.page_size);
    wg::arrive_when_copies_land(&bars[q & 1]);
    if (it == 0 && L.u == 0) stamp_first_kv(first_kv);
  }
  if (span.num_tiles > 2) copy.fetch_slots(p, span.tok_begin + 2 * C::kTile, span.tok_end, span.page_begin);
  for (int it = 0; it < span.num_tiles; ++it) {
    const uint32_t q = seq0 + it;
    const unsigned char* kt = smem.stage(q & 1);
    const uint64_t vdesc = wg::smem_desc(kt + 4 * WgmmaSmem::kColumnBytes, WgmmaSmem::kColumnBytes, 1024, true);
    wg::named_sync(C::kPFull, 256);
    wg::fence_shared_for_async();
    rescale_if_moved(o, smem.row_alpha()[L.r0], smem.row_alpha()[L.r0 + 8]);
    pv_accumulate(o, pdesc, vdesc);
    // Stage first, then P: warpgroup 0 cannot reach its next stage release before taking the next P, so the
    // two signals of one barrier never run into each other.
    wg::named_sync(C::kStageFree, 256);  // warpgroup 0 is done with this stage too
    wg::named_arrive(C::kPFree, 256);
    if (it + 2 < span.num_tiles) {
      copy.issue(smem.stage(q & 1), p.kv, p.page_size);
      wg::arrive_when_copies_land(&bars[q & 1]);
      if (it + 3 < span.num_tiles)
        copy.fetch_slots(p, span.tok_begin + (it + 3) * C::kTile, span.tok_end, span.page_begin);
    }
  }
  wg::named_sync(C::kSumFull, 256);
}

// Merge: warpgroup 0's row sums (over the quad) go to warpgroup 1 through shared memory at the end of the pass,
// and a split work writes each row's LSE (warpgroup 0 holds the running maxima).
__device__ __forceinline__ void merge_row_sums(const DecodeParams& p, const WorkRow& w, const WgmmaSmem& smem,
                                               OnlineSoftmax<2>& sm, int m0, int packed_rows, const WgmmaLane& L) {
  using C = WgmmaDecodeConfig;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    sm.l[h] += dev::shfl_xor(sm.l[h], 1);
    sm.l[h] += dev::shfl_xor(sm.l[h], 2);
  }
  wg::named_sync(C::kSumFree, 256);
  if (L.t == 0) {
    smem.row_sum()[L.r0] = sm.l[0];
    smem.row_sum()[L.r0 + 8] = sm.l[1];
  }
  wg::named_arrive(C::kSumFull, 256);
  if (w.partial_qo_loc >= 0 && L.t == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int pr = m0 + L.r0 + 8 * h;
      if (pr >= packed_rows) continue;
      store_partial_lse(p, w, pr / p.heads, pr % p.heads, sm.m[h], sm.l[h]);
    }
  }
}

// Warpgroup 0's pass: Q, then per tile QK^T, the softmax step and PV for value dims [0, 256); the row sums at
// the end.
__device__ __forceinline__ void attend_lower(const DecodeParams& p, const WorkRow& w, const WgmmaSmem& smem,
                                             const WorkSpan& span, int m0, uint32_t seq0, OutAccum& o,
                                             const WgmmaLane& L) {
  using C = WgmmaDecodeConfig;
  int limit[2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
    limit[h] = last_visible_token(p, w, span, min(m0 + L.r0 + 8 * h, span.packed_rows - 1) / p.heads);
  OnlineSoftmax<2> sm;
  sm.reset();
  const uint64_t qdesc = wg::smem_desc(smem.q(), 16, 1024, true);  // K-major, swizzled like the KV stages
  const uint64_t pdesc = wg::smem_desc(smem.p(), 1024, 128);
  stage_q(smem, p, w, m0, span.packed_rows, L);
  const float scale = p.score_scale_log2;
  uint64_t* bars = smem.stage_full();
  for (int it = 0; it < span.num_tiles; ++it) {
    const uint32_t q = seq0 + it;
    const unsigned char* kt = smem.stage(q & 1);
    const uint64_t kdesc = wg::smem_desc(kt, 16, 1024, true);                       // K-major, swizzled
    const uint64_t vdesc = wg::smem_desc(kt, WgmmaSmem::kColumnBytes, 1024, true);  // N-major, swizzled
    wg::mbarrier_wait(&bars[q & 1], (q >> 1) & 1);
    wg::fence_shared_for_async();
    ScoreAccum s;
    qk_scores(s, qdesc, kdesc);
    softmax_step(s, sm, o, smem, span.tok_begin + it * C::kTile, span.tok_end, limit, scale, L);
    pv_accumulate(o, pdesc, vdesc);
    wg::named_arrive(C::kStageFree, 256);
  }
  merge_row_sums(p, w, smem, sm, m0, span.packed_rows, L);
}

// Store: both warpgroups normalise their 256 value dims of rows r0 and r0 + 8 by the sums warpgroup 0 handed
// over, through the shared epilogue.
__device__ __forceinline__ void store_output(const DecodeParams& p, const WorkRow& w, const WgmmaSmem& smem,
                                             const OutAccum& o, int m0, int packed_rows, const WgmmaLane& L) {
  const float l[2] = {smem.row_sum()[L.r0], smem.row_sum()[L.r0 + 8]};
  if (L.wgi == 1) wg::named_arrive(WgmmaDecodeConfig::kSumFree, 256);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int pr = m0 + L.r0 + 8 * h;
    if (pr >= packed_rows) continue;
    const float inv = l[h] > 0.f ? p.out_scale / l[h] : 0.f;
    with_output_row(p, w, pr / p.heads, pr % p.heads, 256 * L.wgi, [&](const auto& out) {
#pragma unroll
      for (int j = 0; j < OutAccum::kBlocks; ++j) {
        const int i = OutAccum::index(j, h, 0);
        out.store2(OutAccum::column(i, L.t), o[i] * inv, o[i + 1] * inv);
      }
    });
  }
}
#endif

// `stamp` (instrumented runs): thread 0 records the work's start and end, warpgroup 1's first copying thread the
// issue of its first KV tile.
template <int kPair>
__device__ void run_work_wgmma(const DecodeParams& p, const WorkRow& w, unsigned char* smem_base, int rank,
                               WgmmaPipeline& pipe, WorkStamp* stamp) {
#if defined(MLASIM_WGMMA)
  using C = WgmmaDecodeConfig;
  const WgmmaSmem smem{smem_base};
  const WgmmaLane L;
  const WorkSpan span = work_span<C::kTile>(p, w);
  if (threadIdx.x == 0) stamp_begin(stamp);
  for (int m0 = C::kRows * rank; m0 < span.packed_rows; m0 += C::kRows * kPair) {
    const uint32_t seq0 = pipe.seq;
    pipe.seq += span.num_tiles;
    OutAccum o;
    o.fill(0.f);
    if (L.wgi == 1)
      copy_and_pv_upper(p, smem, span, seq0, o, L, m0 == C::kRows * rank ? stamp : nullptr);
    else
      attend_lower(p, w, smem, span, m0, seq0, o, L);
    store_output(p, w, smem, o, m0, span.packed_rows, L);
  }
  if (threadIdx.x == 0) stamp_end(stamp);
#else
  (void)p, (void)w, (void)smem_base, (void)rank, (void)pipe, (void)stamp;
#endif
}

}  // namespace mlasim::kernels
