// The fp8-KV decode kernels on Hopper warpgroup MMAs: persistent (grid = clusters, workgroup c walks works
// [work_indptr[c], work_indptr[c+1])) and the non-persistent grid (one workgroup per work). Built where the
// target has wgmma (sm_90a), like mla_decode_wgmma.cu.
#include "mlasim/kernels/gpu_check.h"
#include "mla_decode_wgmma_fp8_tile.cuh"
#include "mla_launch.h"

namespace mlasim::kernels {

#if defined(MLASIM_GPU_NVIDIA)
namespace {

__global__ void __launch_bounds__(WgmmaFp8Config::kThreads, 1) mla_decode_wgmma_fp8_persistent_kernel(DecodeParams p) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  const int c = static_cast<int>(blockIdx.x);
  run_works_wgmma_fp8(p, p.work_indptr[c], p.work_indptr[c + 1], reinterpret_cast<unsigned char*>(smem_words));
}

__global__ void __launch_bounds__(WgmmaFp8Config::kThreads, 1) mla_decode_wgmma_fp8_grid_kernel(DecodeParams p) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  const int w = static_cast<int>(blockIdx.x);
  run_works_wgmma_fp8(p, w, w + 1, reinterpret_cast<unsigned char*>(smem_words));
}

}  // namespace
#endif

void launch_mla_decode_wgmma_fp8(const DecodeParams& p, bool persistent, int count, hipStream_t stream) {
  if (count <= 0) return;
  if (!wgmma_decode_built()) throw GpuError("the wgmma decode kernel is not built for this target (needs sm_90a)");
#if defined(MLASIM_GPU_NVIDIA)
  using C = WgmmaFp8Config;
  const void* fn = persistent ? reinterpret_cast<const void*>(&mla_decode_wgmma_fp8_persistent_kernel)
                              : reinterpret_cast<const void*>(&mla_decode_wgmma_fp8_grid_kernel);
  MLASIM_GPU_CHECK(hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
  if (persistent)
    mla_decode_wgmma_fp8_persistent_kernel<<<count, C::kThreads, C::kSmemBytes, stream>>>(p);
  else
    mla_decode_wgmma_fp8_grid_kernel<<<count, C::kThreads, C::kSmemBytes, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
#else
  (void)p, (void)persistent, (void)stream;
#endif
}

}  // namespace mlasim::kernels
