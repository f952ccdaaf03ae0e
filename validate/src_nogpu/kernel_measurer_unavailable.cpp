// A build without kernels (MLASIM_KERNELS=OFF) measures nothing: it says so and how to build one that does.
#include "mlasim/model/input_error.h"
#include "mlasim/validate/kernel_measurer.h"

namespace mlasim::validate {

std::unique_ptr<KernelMeasurer> open_kernel_measurer() {
  throw InputError("validate",
                   "this build has no GPU kernels; configure with -DMLASIM_KERNELS=CUDA (NVIDIA) or "
                   "-DMLASIM_KERNELS=HIP (AMD) to run campaigns, or use --dry-run");
}

}  // namespace mlasim::validate
