#pragma once
// Kernel arguments shared by the host launchers and the device code (plain data, no host types).
#include <cstdint>

namespace mlasim::kernels {

// One row of the plan's work_info_set, as the device reads it (same layout as sim::WorkInfo).
struct WorkRow {
  int32_t batch_idx, partial_qo_loc, qo_start, qo_end, kv_start, kv_end, kv_offset, pad;
};

// One workgroup's timestamps in an instrumented run: nanoseconds of the GPU's global clock (NVIDIA %globaltimer,
// AMD s_memrealtime), and the SM/CU it ran on. first_kv_ns ends the work's fixed part; reduce blocks leave it 0.
// sm_cycles counts the SM's own clock (clock64) from begin to end: over the nanoseconds it gives the clock the
// workgroup ran at (during the run it holds the counter's low 32 bits at begin).
struct WorkStamp {
  uint64_t begin_ns, first_kv_ns, end_ns;
  uint32_t cu;
  uint32_t sm_cycles;
};

struct DecodeParams {
  const uint16_t* q = nullptr;          // bf16 [q rows, heads, 576] (head-folded layout)
  const unsigned char* kv = nullptr;    // bf16 or fp8 e4m3 [slots, 576]; slot = page * page_size + offset
  int64_t kv_slots = 0;                 // rows of kv
  const int32_t* kv_indices = nullptr;  // page list -> physical page
  // Per virtual batch: first page-list index, KV tokens, first q row and q rows of its request.
  const int32_t* batch_kv_page_begin = nullptr;
  const int32_t* batch_kv_len = nullptr;
  const int32_t* batch_q_begin = nullptr;
  const int32_t* batch_qlen = nullptr;
  const int32_t* work_indptr = nullptr;  // persistent launches: works of block c are [indptr[c], indptr[c+1])
  const WorkRow* works = nullptr;
  uint16_t* out = nullptr;       // bf16 [q rows, heads, 512]
  float* partial_out = nullptr;  // fp32 [partial rows, heads, 512]
  float* partial_lse = nullptr;  // fp32 [partial rows, heads]
  int heads = 16;
  int page_size = 1;
  int causal = 1;
  float score_scale_log2 = 0.f;  // softmax scale * log2(e) * kv scale: scores go straight to exp2
  float out_scale = 1.f;         // kv scale, applied to the PV product
  // Instrumented runs only (null otherwise): stamps[work * stamp_stride + workgroup of the work's cluster].
  WorkStamp* stamps = nullptr;
  int stamp_stride = 1;
};

struct ReduceParams {
  const int32_t* reduce_indptr = nullptr;
  const int32_t* reduce_final_map = nullptr;  // [tiles, 2]
  const int32_t* reduce_partial_map = nullptr;
  const float* partial_out = nullptr;
  const float* partial_lse = nullptr;
  uint16_t* out = nullptr;
  int num_tiles = 0;  // reduce_indptr entries - 1 (the buffer's tile count)
  int heads = 16;
  int num_partials = 0;         // reduce_indptr's last written value: the persistent loop stops at it
  int row_groups = 1;           // Wg
  WorkStamp* stamps = nullptr;  // instrumented runs only: stamps[block]
};

}  // namespace mlasim::kernels
