// mla_reduce: merges the fp32 partials of each split tile by their LSEs into the final bf16 output.
// Work item = (tile, row group, head); 128 threads take 4 of the 512 value dims each, times 4 groups of partials
// where tiles have 16 or more.
// Blocks stride over the items (a grid of one block per item is the non-persistent launch); a block stops at the
// first tile that starts at the total partial count, because no split tile follows it.
// The partials of a row are taken 256 at a time: the block first stages their row offsets and LSEs in shared
// memory (one load per thread, all in flight together), then each group of 128 threads streams every fourth
// partial with four loads in flight, so a row costs a few memory latencies instead of one per partial.
#include "device_primitives.cuh"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"
#include "work_stamps.cuh"

namespace mlasim::kernels {
namespace {

constexpr int kDimThreads = 128;  // 4 value dims each
constexpr int kChunk = 256;       // partials staged at a time

// kPartialGroups groups of 128 threads split the partials of a row (1 for few partials per tile, 4 for many).
template <int kPartialGroups>
__global__ void __launch_bounds__(kDimThreads* kPartialGroups) mla_reduce_kernel(ReduceParams p) {
  __shared__ int64_t chunk_row[kChunk];
  __shared__ float chunk_lse[kChunk];
  __shared__ float4 group_acc[kPartialGroups][kDimThreads];
  __shared__ float group_sum[kPartialGroups];
  const float kNegInf = -__int_as_float(0x7f800000);
  const int per_tile = p.heads * p.row_groups;
  const int total = p.num_tiles * per_tile;
  const int tid = static_cast<int>(threadIdx.x);
  const int pg = tid / kDimThreads, dt = tid % kDimThreads, d = 4 * dt;
  WorkStamp* stamp = p.stamps && tid == 0 ? p.stamps + blockIdx.x : nullptr;
  stamp_begin(stamp);
  for (int item = blockIdx.x; item < total; item += gridDim.x) {
    const int tile = item / per_tile, rem = item % per_tile;
    const int group = rem / p.heads, head = rem % p.heads;
    const int begin = p.reduce_indptr[tile], end = p.reduce_indptr[tile + 1];
    if (begin == p.num_partials) break;
    if (end - begin <= 1) continue;  // not split: stage 1 wrote the final rows
    const int q_start = p.reduce_final_map[2 * tile], q_end = p.reduce_final_map[2 * tile + 1];
    for (int row = q_start + group; row < q_end; row += p.row_groups) {
      // Online merge over chunks of partials: running max, weight sum and weighted values; partial group pg
      // takes partials pg, pg + 4, ... of each chunk, all groups under the same running max.
      float mx = kNegInf, sum = 0.f, acc[4] = {0.f, 0.f, 0.f, 0.f};
      for (int c0 = begin; c0 < end; c0 += kChunk) {
        const int n = min(kChunk, end - c0);
        __syncthreads();  // the previous chunk's staging is consumed
        for (int i = tid; i < n; i += kDimThreads * kPartialGroups) {
          const int64_t prow = static_cast<int64_t>(p.reduce_partial_map[c0 + i] + row - q_start) * p.heads + head;
          chunk_row[i] = prow;
          chunk_lse[i] = p.partial_lse[prow];
        }
        __syncthreads();
        float cmx = kNegInf;
        for (int i = 0; i < n; ++i) cmx = fmaxf(cmx, chunk_lse[i]);
        const float m_new = fmaxf(mx, cmx);
        if (m_new == kNegInf) continue;  // nothing visible in any partial so far
        const float rescale = expf(mx - m_new);
        sum *= rescale;
#pragma unroll
        for (int k = 0; k < 4; ++k) acc[k] *= rescale;
        mx = m_new;
        constexpr int kInFlight = 4;
        for (int i0 = pg; i0 < n; i0 += kInFlight * kPartialGroups) {
          float4 v[kInFlight];
#pragma unroll
          for (int u = 0; u < kInFlight; ++u) {
            const int i = i0 + u * kPartialGroups;
            v[u] = i < n ? *reinterpret_cast<const float4*>(p.partial_out + chunk_row[i] * 512 + d)
                         : make_float4(0.f, 0.f, 0.f, 0.f);
          }
#pragma unroll
          for (int u = 0; u < kInFlight; ++u) {
            const int i = i0 + u * kPartialGroups;
            const float wgt = i < n ? expf(chunk_lse[i] - mx) : 0.f;
            sum += wgt;
            acc[0] += wgt * v[u].x;
            acc[1] += wgt * v[u].y;
            acc[2] += wgt * v[u].z;
            acc[3] += wgt * v[u].w;
          }
        }
      }
      // The groups' sums and values meet in group 0 (same running max, so they simply add).
      if (kPartialGroups > 1) {
        if (pg > 0) {
          group_acc[pg][dt] = make_float4(acc[0], acc[1], acc[2], acc[3]);
          if (dt == 0) group_sum[pg] = sum;
        }
        __syncthreads();
      }
      if (pg == 0) {
#pragma unroll
        for (int g = 1; g < kPartialGroups; ++g) {
          const float4 a = group_acc[g][dt];
          acc[0] += a.x;
          acc[1] += a.y;
          acc[2] += a.z;
          acc[3] += a.w;
          sum += group_sum[g];
        }
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        uint2 out;
        out.x = dev::pack_bf16x2(acc[0] * inv, acc[1] * inv);
        out.y = dev::pack_bf16x2(acc[2] * inv, acc[3] * inv);
        *reinterpret_cast<uint2*>(p.out + (static_cast<int64_t>(row) * p.heads + head) * 512 + d) = out;
      }
      if (kPartialGroups > 1) __syncthreads();  // group_acc is reused by the next row
    }
  }
  stamp_end(stamp);
}

}  // namespace

void launch_mla_reduce(const ReduceParams& p, int blocks, int max_partials_per_tile, hipStream_t stream) {
  if (blocks <= 0 || p.num_tiles <= 0) return;
  if (max_partials_per_tile >= 16)
    mla_reduce_kernel<4><<<blocks, 4 * kDimThreads, 0, stream>>>(p);
  else
    mla_reduce_kernel<1><<<blocks, kDimThreads, 0, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace mlasim::kernels
