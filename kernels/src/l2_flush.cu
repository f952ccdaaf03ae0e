#include "l2_flush.h"

#include <algorithm>
#include <cstdint>

#include "mlasim/kernels/gpu_check.h"

namespace mlasim::kernels {
namespace {

// Every thread reads 16-byte words strided over the buffer; the XOR keeps the loads alive (the buffer is zero, so
// the sink is never written).
__global__ void __launch_bounds__(256) l2_flush_kernel(const uint4* data, int64_t words, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
    const uint4 v = data[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  if ((acc.x | acc.y | acc.z | acc.w) != 0u) *sink = acc;
}

}  // namespace

L2Flush::L2Flush() {
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  bytes_ = static_cast<size_t>(std::max(prop.l2CacheSize, 1 << 20)) * 2;
  blocks_ = prop.multiProcessorCount * 4;
  MLASIM_GPU_CHECK(hipMalloc(&buffer_, bytes_ + sizeof(uint4)));
  MLASIM_GPU_CHECK(hipMemset(buffer_, 0, bytes_ + sizeof(uint4)));
}

L2Flush::~L2Flush() { (void)hipFree(buffer_); }

void L2Flush::run(hipStream_t stream) const {
  const auto* words = static_cast<const uint4*>(buffer_);
  const auto n = static_cast<int64_t>(bytes_ / sizeof(uint4));
  l2_flush_kernel<<<blocks_, 256, 0, stream>>>(words, n, static_cast<uint4*>(buffer_) + n);
  MLASIM_GPU_CHECK(hipGetLastError());
}

}  // namespace mlasim::kernels
