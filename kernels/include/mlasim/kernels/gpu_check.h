#pragma once
// Turns a failed runtime call into an exception that names the call, so no error passes silently.
#include <stdexcept>
#include <string>

#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void gpu_check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw GpuError(std::string(what) + ": " + hipGetErrorString(e));
}

}  // namespace mlasim::kernels

#define MLASIM_GPU_CHECK(call) ::mlasim::kernels::gpu_check((call), #call)
