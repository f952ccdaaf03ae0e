#include "mlasim/kernels/device_facts.h"
#include "mlasim/kernels/gpu_check.h"
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {
namespace {

std::optional<int> attribute_mhz(hipDeviceAttribute_t a) {
  int khz = 0;
  if (hipDeviceGetAttribute(&khz, a, 0) != hipSuccess || khz <= 0) return std::nullopt;
  return khz / 1000;
}

}  // namespace

DeviceFacts device_facts() {
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  DeviceFacts f;
  f.name = prop.name;
  f.multiprocessors = prop.multiProcessorCount;
  f.sm_clock_mhz = attribute_mhz(hipDeviceAttributeClockRate);
  f.mem_clock_mhz = attribute_mhz(hipDeviceAttributeMemoryClockRate);
  return f;
}

}  // namespace mlasim::kernels
