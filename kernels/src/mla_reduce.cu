// mla_reduce: merges the fp32 partials of each split tile by their LSEs into the final bf16 output.
// Work item = (tile, row group, head); 128 threads, 4 of the 512 value dims each. Blocks stride over the items
// (a grid of one block per item is the non-persistent launch); a block stops at the first tile that starts at
// the total partial count, because no split tile follows it.
#include "device_primitives.cuh"
#include "mlasim/kernels/gpu_check.h"
#include "mla_launch.h"

namespace mlasim::kernels {
namespace {

__global__ void __launch_bounds__(128) mla_reduce_kernel(ReduceParams p) {
  const int per_tile = p.heads * p.row_groups;
  const int total = p.num_tiles * per_tile;
  const int d = 4 * static_cast<int>(threadIdx.x);
  for (int item = blockIdx.x; item < total; item += gridDim.x) {
    const int tile = item / per_tile, rem = item % per_tile;
    const int group = rem / p.heads, head = rem % p.heads;
    const int begin = p.reduce_indptr[tile], end = p.reduce_indptr[tile + 1];
    if (begin == p.num_partials) break;
    if (end - begin <= 1) continue;  // not split: stage 1 wrote the final rows
    const int q_start = p.reduce_final_map[2 * tile], q_end = p.reduce_final_map[2 * tile + 1];
    for (int row = q_start + group; row < q_end; row += p.row_groups) {
      float mx = -__int_as_float(0x7f800000);
      for (int i = begin; i < end; ++i)
        mx = fmaxf(mx, p.partial_lse[static_cast<int64_t>(p.reduce_partial_map[i] + row - q_start) * p.heads + head]);
      float sum = 0.f, acc[4] = {0.f, 0.f, 0.f, 0.f};
      for (int i = begin; i < end; ++i) {
        const int64_t prow = static_cast<int64_t>(p.reduce_partial_map[i] + row - q_start) * p.heads + head;
        const float wgt = mx == -__int_as_float(0x7f800000) ? 0.f : expf(p.partial_lse[prow] - mx);
        const float4 v = *reinterpret_cast<const float4*>(p.partial_out + prow * 512 + d);
        sum += wgt;
        acc[0] += wgt * v.x;
        acc[1] += wgt * v.y;
        acc[2] += wgt * v.z;
        acc[3] += wgt * v.w;
      }
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      uint2 out;
      out.x = dev::pack_bf16x2(acc[0] * inv, acc[1] * inv);
      out.y = dev::pack_bf16x2(acc[2] * inv, acc[3] * inv);
      *reinterpret_cast<uint2*>(p.out + (static_cast<int64_t>(row) * p.heads + head) * 512 + d) = out;
    }
  }
}

}  // namespace

void launch_mla_reduce(const ReduceParams& p, int blocks, hipStream_t stream) {
  if (blocks <= 0 || p.num_tiles <= 0) return;
  mla_reduce_kernel<<<blocks, 128, 0, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace mlasim::kernels
