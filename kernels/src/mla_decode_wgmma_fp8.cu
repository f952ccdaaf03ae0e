// The fp8-KV decode kernels on Hopper warpgroup MMAs: persistent (grid = clusters, workgroup c walks works
// [work_indptr[c], work_indptr[c+1])) and the non-persistent grid (one workgroup per work). Built where the
// target has wgmma (sm_90a), like mla_decode_wgmma.cu; the tensor maps come from the CUDA driver.
#include <algorithm>

#include "mla_decode_wgmma_fp8_tile.cuh"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"
#if defined(MLASIM_GPU_NVIDIA)
#include <cudaTypedefs.h>
#endif

namespace mlasim::kernels {

#if defined(MLASIM_GPU_NVIDIA)
namespace {

__global__ void __launch_bounds__(WgmmaFp8Config::kThreads, 1)
    mla_decode_wgmma_fp8_persistent_kernel(DecodeParams p, const __grid_constant__ Fp8TensorMaps maps) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  const int c = static_cast<int>(blockIdx.x);
  run_works_wgmma_fp8(p, maps, p.work_indptr[c], p.work_indptr[c + 1], reinterpret_cast<unsigned char*>(smem_words));
}

__global__ void __launch_bounds__(WgmmaFp8Config::kThreads, 1)
    mla_decode_wgmma_fp8_grid_kernel(DecodeParams p, const __grid_constant__ Fp8TensorMaps maps) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  const int w = static_cast<int>(blockIdx.x);
  run_works_wgmma_fp8(p, maps, w, w + 1, reinterpret_cast<unsigned char*>(smem_words));
}

// cuTensorMapEncodeTiled through the runtime's driver entry point (no link against the driver library).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const bool ok = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) ==
                        cudaSuccess &&
                    found == cudaDriverEntryPointSuccess;
    return ok ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn) : nullptr;
  }();
  return encode;
}

}  // namespace
#endif

Fp8TensorMaps make_fp8_tensor_maps(const DecodeParams& p) {
  Fp8TensorMaps maps;
#if defined(MLASIM_GPU_NVIDIA)
  // A box must stay inside one page, and a tile's boxes must tile it: page sizes 16, 32, 64 or a multiple of 64.
  const int rows = std::min(p.page_size, WgmmaFp8Config::kTile);
  if (p.page_size < 16 || WgmmaFp8Config::kTile % rows != 0 || p.kv_slots <= 0) return maps;
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return maps;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kQkDim), static_cast<cuuint64_t>(p.kv_slots)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kQkDim)};
  const cuuint32_t element_strides[2] = {1, 1};
  // Both maps cover the whole KV buffer and differ only in the box's width and swizzle.
  auto encode_map = [&](unsigned char* map, cuuint32_t box_bytes, CUtensorMapSwizzle swizzle) {
    const cuuint32_t box[2] = {box_bytes, static_cast<cuuint32_t>(rows)};
    return encode(reinterpret_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_UINT8, 2,
                  const_cast<unsigned char*>(p.kv), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  const CUresult a = encode_map(maps.columns, 128, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUresult b = encode_map(maps.tail, 64, CU_TENSOR_MAP_SWIZZLE_64B);
  if (a == CUDA_SUCCESS && b == CUDA_SUCCESS) maps.box_rows = rows;
#else
  (void)p;
#endif
  return maps;
}

void launch_mla_decode_wgmma_fp8(const DecodeParams& p, const Fp8TensorMaps& maps, bool persistent, int count,
                                 hipStream_t stream) {
  if (count <= 0) return;
  if (!wgmma_decode_built()) throw GpuError("the wgmma decode kernel is not built for this target (needs sm_90a)");
#if defined(MLASIM_GPU_NVIDIA)
  using C = WgmmaFp8Config;
  const void* fn = persistent ? reinterpret_cast<const void*>(&mla_decode_wgmma_fp8_persistent_kernel)
                              : reinterpret_cast<const void*>(&mla_decode_wgmma_fp8_grid_kernel);
  MLASIM_GPU_CHECK(hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, WgmmaFp8Smem::kBytes));
  if (persistent)
    mla_decode_wgmma_fp8_persistent_kernel<<<count, C::kThreads, WgmmaFp8Smem::kBytes, stream>>>(p, maps);
  else
    mla_decode_wgmma_fp8_grid_kernel<<<count, C::kThreads, WgmmaFp8Smem::kBytes, stream>>>(p, maps);
  MLASIM_GPU_CHECK(hipGetLastError());
#else
  (void)p, (void)maps, (void)persistent, (void)stream;
#endif
}

}  // namespace mlasim::kernels
