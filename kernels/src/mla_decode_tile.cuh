#pragma once
// One work of a plan on one workgroup: a qo tile (packed rows = query rows x heads) against one KV range.
// KV tiles of 64 tokens stream through shared memory in a multi-stage asynchronous pipeline; each group of four
// warps keeps 16 packed rows of Q in registers, splits QK^T over the tile's tokens (16 per warp), merges the
// row maxima through shared memory, and splits PV over the 512 value dims (128 per warp). With two groups, both
// share each KV tile (32 packed rows per pass); larger tiles take several passes over the range.
#include <cstdint>

#include "device_primitives.cuh"
#include "mla_params.h"

namespace mlasim::kernels {

inline constexpr int kQkDim = 576;
inline constexpr int kVDim = 512;

template <bool kFp8, int kGroups>
struct DecodeConfig {
  static constexpr int kTile = 64;          // KV tokens per shared-memory tile
  static constexpr int kStages = kFp8 ? 4 : 3;
  static constexpr int kWarps = 4 * kGroups;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRows = 16 * kGroups;  // packed rows per pass
  // Rows padded by 16 bytes so that ldmatrix's eight row addresses fall in distinct bank groups.
  static constexpr int kBf16Row = kQkDim * 2 + 16;
  static constexpr int kKvBytes = kFp8 ? 1 : 2;
  static constexpr int kStageRow = kQkDim * kKvBytes + 16;
  static constexpr int kChunks = kQkDim * kKvBytes / 16;  // 16-byte copies per token row
  static constexpr int kStageBytes = kTile * kStageRow;
  static constexpr int kConvertBytes = kFp8 ? kTile * kBf16Row : 0;
  static constexpr int kPRow = kTile * 2 + 16;
  static constexpr int kPBytes = kGroups * 16 * kPRow;
  static constexpr int kExchangeBytes = kGroups * 4 * 16 * 4;
  static constexpr int kSmemBytes = kStages * kStageBytes + kConvertBytes + kPBytes + kExchangeBytes;
};

__device__ __forceinline__ int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Issues the asynchronous copies of KV tile `tile` (tokens from `tok0`) into `stage`.
template <class C>
__device__ __forceinline__ void issue_kv_tile(const DecodeParams& p, unsigned char* stage, int tok0, int tok_end,
                                              int page_begin) {
  const int tid = static_cast<int>(threadIdx.x);
  constexpr int kRowsPerPass = C::kThreads / 8;
  for (int r = tid / 8; r < C::kTile; r += kRowsPerPass) {
    const int tok = tok0 + r;
    const bool valid = tok < tok_end;
    const unsigned char* src = p.kv;
    if (valid) {
      const int page = p.kv_indices[page_begin + tok / p.page_size];
      const int64_t slot = static_cast<int64_t>(page) * p.page_size + tok % p.page_size;
      src = p.kv + slot * (kQkDim * C::kKvBytes);
    }
    unsigned char* dst = stage + r * C::kStageRow;
    for (int c = tid % 8; c < C::kChunks; c += 8) dev::copy_async_16(dst + 16 * c, src + 16 * c, valid);
  }
}

// fp8 stage -> bf16 tile, exact (e4m3 values are representable in bf16).
template <class C>
__device__ __forceinline__ void convert_fp8_tile(const unsigned char* stage, unsigned char* out) {
  constexpr int kGroupsPerRow = kQkDim / 8;
  for (int i = static_cast<int>(threadIdx.x); i < C::kTile * kGroupsPerRow; i += C::kThreads) {
    const int r = i / kGroupsPerRow, c = i % kGroupsPerRow;
    const uint2 v = *reinterpret_cast<const uint2*>(stage + r * C::kStageRow + 8 * c);
    uint4 o;
    dev::fp8x4_to_bf16x4(v.x, &o.x);
    dev::fp8x4_to_bf16x4(v.y, &o.z);
    *reinterpret_cast<uint4*>(out + r * C::kBf16Row + 16 * c) = o;
  }
}

template <bool kFp8, int kGroups>
__device__ void run_work(const DecodeParams& p, const WorkRow& w, unsigned char* smem) {
  using C = DecodeConfig<kFp8, kGroups>;
  const int lane = dev::lane_id(), warp = dev::warp_id();
  const int group = warp / 4, wig = warp % 4;
  const int g = lane >> 2, t = lane & 3;
  const int H = p.heads;

  unsigned char* stages = smem;
  unsigned char* converted = smem + C::kStages * C::kStageBytes;
  unsigned char* pbuf = converted + C::kConvertBytes + group * 16 * C::kPRow;
  float* exchange = reinterpret_cast<float*>(smem + C::kStages * C::kStageBytes + C::kConvertBytes + C::kPBytes) +
                    group * 64;

  const int b = w.batch_idx;
  const int kv_len = p.batch_kv_len[b], page_begin = p.batch_kv_page_begin[b];
  const int q_begin = p.batch_q_begin[b], qlen = p.batch_qlen[b];
  const int tok_begin = (w.kv_start - page_begin) * p.page_size;
  const int tok_end = min((w.kv_end - page_begin) * p.page_size, kv_len);
  const int num_tiles = tok_end > tok_begin ? ceil_div(tok_end - tok_begin, C::kTile) : 0;
  const int packed_rows = (w.qo_end - w.qo_start) * H;
  const float kNegInf = -__int_as_float(0x7f800000);

  for (int m0 = 0; m0 < packed_rows; m0 += C::kRows) {
    const int mrow = m0 + 16 * group;
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
        qf[ks][0] = active ? *reinterpret_cast<const uint32_t*>(q0 + 16 * ks + 2 * t) : 0u;
        qf[ks][1] = active ? *reinterpret_cast<const uint32_t*>(q1 + 16 * ks + 2 * t) : 0u;
        qf[ks][2] = active ? *reinterpret_cast<const uint32_t*>(q0 + 16 * ks + 8 + 2 * t) : 0u;
        qf[ks][3] = active ? *reinterpret_cast<const uint32_t*>(q1 + 16 * ks + 8 + 2 * t) : 0u;
      }
    }
    float o[16][4];
#pragma unroll
    for (int n = 0; n < 16; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m_run[2] = {kNegInf, kNegInf};
    float l_run[2] = {0.f, 0.f};

#pragma unroll
    for (int s = 0; s < C::kStages - 1; ++s) {
      if (s < num_tiles)
        issue_kv_tile<C>(p, stages + s * C::kStageBytes, tok_begin + s * C::kTile, tok_end, page_begin);
      dev::copy_async_commit();
    }

    for (int it = 0; it < num_tiles; ++it) {
      dev::copy_async_wait<C::kStages - 2>();
      __syncthreads();
      {
        const int next = it + C::kStages - 1;
        if (next < num_tiles)
          issue_kv_tile<C>(p, stages + (next % C::kStages) * C::kStageBytes, tok_begin + next * C::kTile, tok_end,
                           page_begin);
        dev::copy_async_commit();
      }
      const unsigned char* kt = stages + (it % C::kStages) * C::kStageBytes;
      if constexpr (kFp8) {
        convert_fp8_tile<C>(kt, converted);
        __syncthreads();
        kt = converted;
      }

      // S = Q K^T for this warp's 16 tokens (two n8 tiles). Even and odd k steps accumulate separately, so four
      // independent chains hide the matrix unit's latency.
      float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
      float s_odd[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
      for (int kk = 0; kk < kQkDim / 32; ++kk) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          uint32_t kb[4];
          const uint32_t off = (16 * wig + 8 * j + (lane & 7)) * C::kBf16Row + (32 * kk + 8 * (lane >> 3)) * 2;
          dev::ldmatrix_x4(kb, kt, off);
          dev::mma_bf16_16816(s[j], qf[2 * kk], kb);
          dev::mma_bf16_16816(s_odd[j], qf[2 * kk + 1], kb + 2);
        }
      }
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] += s_odd[j][e];

      // Scale, mask, and the row maxima of this tile.
      const int tile_tok = tok_begin + it * C::kTile + 16 * wig;
      float mx[2] = {kNegInf, kNegInf};
#pragma unroll
      for (int j = 0; j < 2; ++j)
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
        alpha[h] = exp2f(m_run[h] - base[h]);
        m_run[h] = m_new;
      }
      float rs[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float p0 = exp2f(s[j][0] - base[0]), p1 = exp2f(s[j][1] - base[0]);
        const float p2 = exp2f(s[j][2] - base[1]), p3 = exp2f(s[j][3] - base[1]);
        rs[0] += p0 + p1;
        rs[1] += p2 + p3;
        const int col = (16 * wig + 8 * j + 2 * t) * 2;
        *reinterpret_cast<uint32_t*>(pbuf + g * C::kPRow + col) = dev::pack_bf16x2(p0, p1);
        *reinterpret_cast<uint32_t*>(pbuf + (g + 8) * C::kPRow + col) = dev::pack_bf16x2(p2, p3);
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
#pragma unroll
      for (int ks = 0; ks < C::kTile / 16; ++ks) {
        uint32_t pa[4];
        dev::ldmatrix_x4(pa, pbuf, (lane & 15) * C::kPRow + (16 * ks + 8 * (lane >> 4)) * 2);
#pragma unroll
        for (int nb = 0; nb < 8; ++nb) {
          uint32_t vb[4];
          const int d0 = 128 * wig + 16 * nb;
          const uint32_t off =
              (16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1)) * C::kBf16Row + (d0 + 8 * (lane >> 4)) * 2;
          dev::ldmatrix_x4_trans(vb, kt, off);
          dev::mma_bf16_16816(o[2 * nb], pa, vb);
          dev::mma_bf16_16816(o[2 * nb + 1], pa, vb + 2);
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
    float inv[2], lse[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = 0.f;
#pragma unroll
      for (int k = 0; k < 4; ++k) l += exchange[k * 16 + g + 8 * h];
      inv[h] = l > 0.f ? p.out_scale / l : 0.f;
      lse[h] = l > 0.f ? (m_run[h] + log2f(l)) * 0.6931471805599453f : kNegInf;
    }
    if (active) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (w.partial_qo_loc < 0) {
          uint16_t* dst = p.out + (static_cast<int64_t>(w.qo_start + qrow[h]) * H + head[h]) * kVDim + 128 * wig;
#pragma unroll
          for (int n = 0; n < 16; ++n)
            *reinterpret_cast<uint32_t*>(dst + 8 * n + 2 * t) =
                dev::pack_bf16x2(o[n][2 * h] * inv[h], o[n][2 * h + 1] * inv[h]);
        } else {
          const int64_t prow = static_cast<int64_t>(w.partial_qo_loc + qrow[h]) * H + head[h];
          float* dst = p.partial_out + prow * kVDim + 128 * wig;
#pragma unroll
          for (int n = 0; n < 16; ++n)
            *reinterpret_cast<float2*>(dst + 8 * n + 2 * t) =
                make_float2(o[n][2 * h] * inv[h], o[n][2 * h + 1] * inv[h]);
          if (wig == 0 && t == 0) p.partial_lse[prow] = lse[h];
        }
      }
    }
    __syncthreads();  // the next pass reuses the stages and the exchange buffer
  }
}

}  // namespace mlasim::kernels
