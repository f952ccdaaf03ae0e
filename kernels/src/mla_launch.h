#pragma once
// Launchers of the three kernels (one per .cu file). Each checks its launch and throws GpuError on failure.
#include "mla_params.h"
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

// Warp groups of rows per pass: 1 for 16-row tiles (the launch then splits each KV tile between two groups),
// else 2 (two warp groups of 16 rows share each KV tile).
int decode_groups_for(int packed_rows_per_tile);

// Grid = num_clusters workgroups, each walking its work list.
void launch_mla_decode_persistent(const DecodeParams& p, bool fp8_kv, int groups, int num_clusters, hipStream_t stream);
// Grid = num_works workgroups, one work each, in launch order.
void launch_mla_decode_splitkv(const DecodeParams& p, bool fp8_kv, int groups, int num_works, hipStream_t stream);
// Hopper warpgroup-MMA decode (bf16 KV): built only for sm_90a. `pair` workgroups (1 or 2) share each tile's
// rows; the grid is count x pair (count = clusters when persistent, else works).
bool wgmma_decode_built();
int wgmma_pair_for(int packed_rows_per_tile);
void launch_mla_decode_wgmma(const DecodeParams& p, bool persistent, int pair, int count, hipStream_t stream);
// Its fp8-KV counterpart (tokens as the MMAs' M, 16 packed rows per pass): one workgroup per cluster or work.
// Its producer copies whole tiles of pages of 16 or more tokens through two tensor maps over the KV buffer (CUDA
// driver objects, kept opaque here), built once per buffer: box_rows = rows per box (the page size, at most 64),
// 0 where none could be built (pages of fewer than 16 tokens, AMD), and then every tile takes asynchronous copies.
struct alignas(64) Fp8TensorMaps {
  unsigned char columns[128];  // 128-byte-swizzle boxes of 128 dims
  unsigned char tail[128];     // 64-byte-swizzle boxes of the last 64 dims
  int box_rows = 0;
};
Fp8TensorMaps make_fp8_tensor_maps(const DecodeParams& p);
void launch_mla_decode_wgmma_fp8(const DecodeParams& p, const Fp8TensorMaps& maps, bool persistent, int count,
                                 hipStream_t stream);
// Grid per AITER's reduce launch rules (sim::aiter_reduce_launch, mlasim/sim/reduce_launch.h).
void launch_mla_reduce(const ReduceParams& p, int blocks, int max_partials_per_tile, hipStream_t stream);

}  // namespace mlasim::kernels
