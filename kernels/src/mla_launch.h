#pragma once
// Launchers of the three kernels (one per .cu file). Each checks its launch and throws GpuError on failure.
#include "mlasim/kernels/gpu_runtime.h"
#include "mla_params.h"

namespace mlasim::kernels {

// Warp groups of rows per pass: 1 for 16-row tiles (the launch then splits each KV tile between two groups),
// else 2 (two warp groups of 16 rows share each KV tile).
int decode_groups_for(int packed_rows_per_tile);

// Grid = num_clusters workgroups, each walking its work list.
void launch_mla_decode_persistent(const DecodeParams& p, bool fp8_kv, int groups, int num_clusters,
                                  hipStream_t stream);
// Grid = num_works workgroups, one work each, in launch order.
void launch_mla_decode_splitkv(const DecodeParams& p, bool fp8_kv, int groups, int num_works, hipStream_t stream);
// Hopper warpgroup-MMA decode (bf16 KV): built only for sm_90a. `pair` workgroups (1 or 2) share each tile's
// rows; the grid is count x pair (count = clusters when persistent, else works).
bool wgmma_decode_built();
int wgmma_pair_for(int packed_rows_per_tile);
void launch_mla_decode_wgmma(const DecodeParams& p, bool persistent, int pair, int count, hipStream_t stream);
// Its fp8-KV counterpart (tokens as the MMAs' M, 16 packed rows per pass): one workgroup per cluster or work.
void launch_mla_decode_wgmma_fp8(const DecodeParams& p, bool persistent, int count, hipStream_t stream);
// Grid per AITER's reduce launch rules (see reduce_launch.h for the shape).
void launch_mla_reduce(const ReduceParams& p, int blocks, int max_partials_per_tile, hipStream_t stream);

}  // namespace mlasim::kernels
