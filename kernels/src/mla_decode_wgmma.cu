// The decode kernels on Hopper warpgroup MMAs (bf16 KV): persistent (grid = clusters x pair, workgroup pair p of
// cluster c walks works [work_indptr[c], work_indptr[c+1])) and the non-persistent grid (one pair per work).
// Built where the target has wgmma (sm_90a); elsewhere wgmma_decode_built() says no and the runner keeps the
// portable kernels.
#include "mla_decode_wgmma_tile.cuh"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"

namespace mlasim::kernels {

#if defined(MLASIM_GPU_NVIDIA)
namespace {

template <int kPair>
__global__ void __launch_bounds__(WgmmaDecodeConfig::kThreads, 1) mla_decode_wgmma_persistent_kernel(DecodeParams p) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  auto* smem = reinterpret_cast<unsigned char*>(smem_words);
  const int cluster = static_cast<int>(blockIdx.x) / kPair, rank = static_cast<int>(blockIdx.x) % kPair;
  const int end = p.work_indptr[cluster + 1];
  wgmma_pipeline_init(smem);
  WgmmaPipeline pipe;
  for (int i = p.work_indptr[cluster]; i < end; ++i)
    run_work_wgmma<kPair>(p, p.works[i], smem, rank, pipe, work_stamp(p, i, rank));
}

template <int kPair>
__global__ void __launch_bounds__(WgmmaDecodeConfig::kThreads, 1) mla_decode_wgmma_grid_kernel(DecodeParams p) {
  extern __shared__ __align__(1024) uint4 smem_words[];
  auto* smem = reinterpret_cast<unsigned char*>(smem_words);
  wgmma_pipeline_init(smem);
  WgmmaPipeline pipe;
  const int work = static_cast<int>(blockIdx.x) / kPair, rank = static_cast<int>(blockIdx.x) % kPair;
  run_work_wgmma<kPair>(p, p.works[work], smem, rank, pipe, work_stamp(p, work, rank));
}

template <int kPair>
void launch(const DecodeParams& p, bool persistent, int count, hipStream_t stream) {
  using C = WgmmaDecodeConfig;
  const void* fn = persistent ? reinterpret_cast<const void*>(&mla_decode_wgmma_persistent_kernel<kPair>)
                              : reinterpret_cast<const void*>(&mla_decode_wgmma_grid_kernel<kPair>);
  MLASIM_GPU_CHECK(hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, WgmmaSmem::kBytes));
  if (persistent)
    mla_decode_wgmma_persistent_kernel<kPair><<<count * kPair, C::kThreads, WgmmaSmem::kBytes, stream>>>(p);
  else
    mla_decode_wgmma_grid_kernel<kPair><<<count * kPair, C::kThreads, WgmmaSmem::kBytes, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace
#endif

bool wgmma_decode_built() {
#if defined(MLASIM_GPU_NVIDIA) && defined(MLASIM_BUILD_SM90A)
  return true;
#else
  return false;
#endif
}

int wgmma_pair_for(int packed_rows_per_tile) { return packed_rows_per_tile > WgmmaDecodeConfig::kRows ? 2 : 1; }

void launch_mla_decode_wgmma(const DecodeParams& p, bool persistent, int pair, int count, hipStream_t stream) {
  if (count <= 0) return;
  if (!wgmma_decode_built()) throw GpuError("the wgmma decode kernel is not built for this target (needs sm_90a)");
#if defined(MLASIM_GPU_NVIDIA)
  pair == 2 ? launch<2>(p, persistent, count, stream) : launch<1>(p, persistent, count, stream);
#else
  (void)p, (void)persistent, (void)pair, (void)stream;
#endif
}

}  // namespace mlasim::kernels
