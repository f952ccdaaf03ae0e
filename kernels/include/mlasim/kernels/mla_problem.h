#pragma once
// The tensors of one MLA decode step in the layout the kernels take: head-folded bf16 Q, a paged KV cache with
// a shuffled page table, and the per-virtual-batch index arrays a plan's batch_idx refers to.
#include <cstdint>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"

namespace mlasim::kernels {

struct MlaProblem {
  DecodeBatch batch;
  int heads = 16;                   // heads per virtual batch (the plan's num_heads_eff)
  int qk_batch_ratio = 1;           // virtual batches per request
  float sm_scale = 0.f;             // softmax scale, 1/sqrt(576)
  float kv_scale = 1.f;             // per-tensor scale of an fp8 KV cache (1 for bf16)
  std::vector<int32_t> kv_indptr;   // per request, in page-list entries
  std::vector<int32_t> kv_indices;  // page list -> physical page (a random permutation)
  // Per virtual batch b (request b / qk_batch_ratio).
  std::vector<int32_t> batch_kv_page_begin, batch_kv_len, batch_q_begin, batch_qlen;
  int q_rows = 0;           // rows of the folded q / output tensors
  std::vector<uint16_t> q;  // bf16 bits [q_rows, heads, 576]
  std::vector<uint8_t> kv;  // [physical pages * page_size, 576] elements of batch.kv_dtype

  int kv_elem_bytes() const { return dtype_bytes(batch.kv_dtype); }
  // Bytes of KV the attention must read once (every request's tokens x 576 x element size).
  int64_t kv_bytes() const;

  // Random inputs (uniform values, never zeros) for `batch` as `plan` folds it; Q is always bf16. A sparse batch
  // becomes the gathered per-token batch of the plan (sim::kernel_batch), which `batch` then holds.
  static MlaProblem make(const DecodeBatch& batch, const sim::Plan& plan, uint64_t seed);
};

// Conversions used on the host side (round to nearest even).
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t b);
uint8_t float_to_fp8_e4m3(float f);
float fp8_e4m3_to_float(uint8_t b);

}  // namespace mlasim::kernels
