#pragma once
// AITER's launch rules for mla_reduce_v1 (aiter-v1-planner spec section 7): row groups per (tile, head) and grid.

namespace mlasim::kernels {

struct ReduceLaunch {
  int row_groups = 1;       // Wg
  int blocks = 0;           // H * Wg * NT (non-persistent) or 16 * CU (persistent)
  bool persistent = false;
};

ReduceLaunch reduce_launch_shape(int num_tiles, int heads, int max_seqlen_q, int num_cu);

}  // namespace mlasim::kernels
