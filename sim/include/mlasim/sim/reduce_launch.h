#pragma once
// How AITER's mla_reduce_v1 launches for a plan (aiter-v1-planner spec §7), and the Triton stage-2 reduce of
// the non-persistent path (split-policies spec §1.5).
#include <cstdint>

namespace mlasim::sim {

struct ReduceLaunch {
  int tiles = 0;            // NT: reduce_indptr rows of the buffer, split or not
  int heads = 0;            // H after folding
  int row_groups = 1;       // Wg: workgroups per (tile, head), each taking every Wg-th row
  bool persistent = false;  // 16 x CU blocks striding over the work items; else a grid (H, Wg, NT)
  int blocks = 0;           // workgroups launched
  int64_t work_items() const { return int64_t{tiles} * heads * row_groups; }
};

// AITER's rules: hw = 8 CU, wl = NT H; Wg = min(cdiv(int(1.3 hw), wl), max_seqlen_q) rounded up to a power of two
// and to {1,2,4,8,16,64,256} when int(1.3 hw) > wl, else 1; a grid (H, Wg, NT) when H Wg NT <= 16 CU, else
// 16 CU persistent blocks.
ReduceLaunch aiter_reduce_launch(int tiles, int heads, int num_cu, int max_seqlen_q);

// Reduce workgroups resident per CU. AITER: launch bounds target occupancy 8 (2 waves each). Triton
// (_fwd_kernel_stage2_asm): one wave per program at waves_per_eu 4 on 4 SIMDs, 16 programs.
// A profile's measured reduce_blocks_per_cu and reduce_wide_blocks_per_cu replace these (cost_model.h).
inline constexpr int kAiterReduceBlocksPerCu = 8;
inline constexpr int kTritonReduceProgramsPerCu = 16;
// Our reduce takes a tile's partials with four groups of 128 threads (its wide form) once a tile of the launch
// has this many (kernels/src/mla_reduce.cu).
inline constexpr int kWideReducePartials = 16;

// Bytes one reduce item moves: it reads `partials` fp32 rows of Dv values plus the LSE for each of `rows` rows
// of one head, and writes them as bf16.
inline double reduce_read_bytes(int rows, int partials) { return double(rows) * partials * (4.0 * 512 + 4); }
inline double reduce_write_bytes(int rows) { return double(rows) * 2.0 * 512; }

}  // namespace mlasim::sim
