// mla_decode_persistent: grid = the plan's clusters; workgroup c runs works [work_indptr[c], work_indptr[c+1]).
#include "mla_decode_tile.cuh"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"

namespace mlasim::kernels {
namespace {

template <bool kFp8, int kGroups, bool kSplitTokens>
__global__ void __launch_bounds__(128 * kGroups, 1) mla_decode_persistent_kernel(DecodeParams p) {
  extern __shared__ uint4 smem_words[];
  auto* smem = reinterpret_cast<unsigned char*>(smem_words);
  const int end = p.work_indptr[blockIdx.x + 1];
  for (int i = p.work_indptr[blockIdx.x]; i < end; ++i)
    run_work<kFp8, kGroups, kSplitTokens>(p, p.works[i], smem, work_stamp(p, i, 0));
}

template <bool kFp8, int kGroups, bool kSplitTokens>
void launch(const DecodeParams& p, int blocks, hipStream_t stream) {
  using C = DecodeConfig<kFp8, kGroups, kSplitTokens>;
  const void* fn = reinterpret_cast<const void*>(&mla_decode_persistent_kernel<kFp8, kGroups, kSplitTokens>);
  MLASIM_GPU_CHECK(hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, DecodeSmem<C>::kBytes));
  mla_decode_persistent_kernel<kFp8, kGroups, kSplitTokens><<<blocks, C::kThreads, DecodeSmem<C>::kBytes, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace

int decode_groups_for(int packed_rows_per_tile) { return packed_rows_per_tile <= 16 ? 1 : 2; }

void launch_mla_decode_persistent(const DecodeParams& p, bool fp8_kv, int groups, int num_clusters,
                                  hipStream_t stream) {
  if (num_clusters <= 0) return;
  if (fp8_kv)
    groups == 1 ? launch<true, 2, true>(p, num_clusters, stream) : launch<true, 2, false>(p, num_clusters, stream);
  else
    groups == 1 ? launch<false, 2, true>(p, num_clusters, stream) : launch<false, 2, false>(p, num_clusters, stream);
}

}  // namespace mlasim::kernels
