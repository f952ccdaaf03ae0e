// mla_decode_splitkv: the non-persistent baseline. One workgroup per work, in the plan's launch order; the
// hardware schedules the grid (round-robin or contiguous splits come from the plan's policy).
#include "mla_decode_tile.cuh"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"

namespace mlasim::kernels {
namespace {

template <bool kFp8, int kGroups, bool kSplitTokens>
__global__ void __launch_bounds__(128 * kGroups, 1) mla_decode_splitkv_kernel(DecodeParams p) {
  extern __shared__ uint4 smem_words[];
  const int w = static_cast<int>(blockIdx.x);
  run_work<kFp8, kGroups, kSplitTokens>(p, p.works[w], reinterpret_cast<unsigned char*>(smem_words),
                                        work_stamp(p, w, 0));
}

template <bool kFp8, int kGroups, bool kSplitTokens>
void launch(const DecodeParams& p, int blocks, hipStream_t stream) {
  using C = DecodeConfig<kFp8, kGroups, kSplitTokens>;
  const void* fn = reinterpret_cast<const void*>(&mla_decode_splitkv_kernel<kFp8, kGroups, kSplitTokens>);
  MLASIM_GPU_CHECK(hipFuncSetAttribute(fn, hipFuncAttributeMaxDynamicSharedMemorySize, DecodeSmem<C>::kBytes));
  mla_decode_splitkv_kernel<kFp8, kGroups, kSplitTokens><<<blocks, C::kThreads, DecodeSmem<C>::kBytes, stream>>>(p);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace

void launch_mla_decode_splitkv(const DecodeParams& p, bool fp8_kv, int groups, int num_works, hipStream_t stream) {
  if (num_works <= 0) return;
  if (fp8_kv)
    groups == 1 ? launch<true, 2, true>(p, num_works, stream) : launch<true, 2, false>(p, num_works, stream);
  else
    groups == 1 ? launch<false, 2, true>(p, num_works, stream) : launch<false, 2, false>(p, num_works, stream);
}

}  // namespace mlasim::kernels
