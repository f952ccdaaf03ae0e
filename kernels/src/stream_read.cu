#include "mlasim/kernels/stream_read.h"

#include <algorithm>

#include "l2_flush.h"
#include "mlasim/kernels/gpu_check.h"
#include "work_stamps.cuh"

namespace mlasim::kernels {
namespace {

// Launched with wg_per_sm blocks per SM on every SM (shared memory caps residency at wg_per_sm); blocks on SMs
// at or above `active` leave at once, the others take a slot on their SM and read their share.
__global__ void __launch_bounds__(256) stream_read_kernel(const uint4* data, int64_t vecs_per_block, int active,
                                                          int wg_per_sm, unsigned* slots, uint4* sink) {
  __shared__ int slot;
  const unsigned sm = compute_unit_id();
  if (sm >= static_cast<unsigned>(active)) return;
  if (threadIdx.x == 0) slot = static_cast<int>(atomicAdd(&slots[sm], 1u));
  __syncthreads();
  if (slot >= wg_per_sm) return;
  const uint4* p = data + (static_cast<int64_t>(sm) * wg_per_sm + slot) * vecs_per_block;
  uint4 acc = make_uint4(0, 0, 0, 0);
  constexpr int kUnroll = 4;
  for (int64_t i = threadIdx.x; i < vecs_per_block; i += kUnroll * blockDim.x) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t j = i + static_cast<int64_t>(u) * blockDim.x;
      v[u] = j < vecs_per_block ? p[j] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      acc.x ^= v[u].x;
      acc.y ^= v[u].y;
      acc.z ^= v[u].z;
      acc.w ^= v[u].w;
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) sink[0] = acc;  // keeps the loads live
}

}  // namespace

std::vector<StreamReadPoint> stream_read_sweep(const std::vector<int>& active_sms, const std::vector<int>& wg_per_sm,
                                               int64_t bytes_per_sm, int repetitions) {
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int64_t max_bytes = bytes_per_sm * sms;
  void *data = nullptr, *slots = nullptr, *sink = nullptr;
  const L2Flush flush;
  MLASIM_GPU_CHECK(hipMalloc(&data, max_bytes));
  MLASIM_GPU_CHECK(hipMemset(data, 0x5a, max_bytes));
  MLASIM_GPU_CHECK(hipMalloc(&slots, sms * sizeof(unsigned)));
  MLASIM_GPU_CHECK(hipMalloc(&sink, 64));
  hipEvent_t e0, e1;
  MLASIM_GPU_CHECK(hipEventCreate(&e0));
  MLASIM_GPU_CHECK(hipEventCreate(&e1));
#if defined(MLASIM_GPU_NVIDIA)
  const size_t smem_per_sm = prop.sharedMemPerMultiprocessor, smem_block_max = prop.sharedMemPerBlockOptin;
#else
  const size_t smem_per_sm = prop.maxSharedMemoryPerMultiProcessor, smem_block_max = prop.sharedMemPerBlock;
#endif
  std::vector<StreamReadPoint> points;
  for (int k : wg_per_sm) {
    // Enough shared memory that at most k blocks fit on one SM.
    const int reserve = static_cast<int>(std::min<size_t>(smem_per_sm / k - 2048, smem_block_max));
    MLASIM_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(&stream_read_kernel),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, reserve));
    for (int n : active_sms) {
      if (n > sms) continue;
      const int64_t vecs_per_block = bytes_per_sm / k / 16;
      std::vector<double> us;
      for (int r = 0; r < repetitions + 1; ++r) {
        MLASIM_GPU_CHECK(hipMemset(slots, 0, sms * sizeof(unsigned)));
        flush.run(nullptr);
        MLASIM_GPU_CHECK(hipEventRecord(e0, nullptr));
        stream_read_kernel<<<sms * k, 256, reserve, nullptr>>>(static_cast<const uint4*>(data), vecs_per_block, n, k,
                                                               static_cast<unsigned*>(slots),
                                                               static_cast<uint4*>(sink));
        MLASIM_GPU_CHECK(hipGetLastError());
        MLASIM_GPU_CHECK(hipEventRecord(e1, nullptr));
        MLASIM_GPU_CHECK(hipEventSynchronize(e1));
        float ms = 0;
        MLASIM_GPU_CHECK(hipEventElapsedTime(&ms, e0, e1));
        if (r > 0) us.push_back(1000.0 * ms);
      }
      std::sort(us.begin(), us.end());
      StreamReadPoint pt;
      pt.active_sms = n;
      pt.wg_per_sm = k;
      pt.bytes = vecs_per_block * 16 * k * n;
      pt.us = us[us.size() / 2];
      pt.tbps = static_cast<double>(pt.bytes) / pt.us * 1e-6;
      points.push_back(pt);
    }
  }
  (void)hipEventDestroy(e0);
  (void)hipEventDestroy(e1);
  (void)hipFree(data);
  (void)hipFree(slots);
  (void)hipFree(sink);
  return points;
}

}  // namespace mlasim::kernels
