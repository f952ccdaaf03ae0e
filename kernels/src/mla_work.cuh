#pragma once
// What every decode kernel needs to know about one work of a plan: the MLA head dims, where the work's KV range
// and query rows sit in its request, and which KV tokens a query row may see.
#include <cstdint>

#include "mla_params.h"
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

inline constexpr int kQkDim = 576;  // Q and K dims: 512 latent + 64 rope
inline constexpr int kVDim = 512;   // V is the first 512 dims of a KV row

__device__ __forceinline__ int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Where one work sits in its request: KV tokens [tok_begin, tok_end) of kv_len, the request's page-list start and
// query rows, and the work's tiles of kTile tokens and packed rows (query rows x heads).
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

// The last KV token that query row `qrow` of the work's tile may see. Causal masking uses absolute positions:
// query token i of a request sees tokens [0, kv_len - qlen + i].
__device__ __forceinline__ int last_visible_token(const DecodeParams& p, const WorkRow& w, const WorkSpan& s,
                                                  int qrow) {
  const int i = w.qo_start + qrow - s.q_begin;
  return p.causal ? s.kv_len - s.qlen + i : s.kv_len - 1;
}

}  // namespace mlasim::kernels
