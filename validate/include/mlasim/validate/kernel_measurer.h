#pragma once
// Runs plans on the real kernels of this build and times them: the part of `mlasim validate` that needs a GPU.
// A build without kernels (MLASIM_KERNELS=OFF), or a machine without a GPU, cannot open one; the error says which.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"
#include "mlasim/validate/measured_timeline.h"

namespace mlasim::validate {

struct DeviceInfo {
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string driver;  // "cuda-driver-api 13000"
  std::optional<int> sm_clock_mhz;
  std::optional<int> mem_clock_mhz;
  int multiprocessors = 0;
};

struct MeasureOptions {
  int warmup = 2;
  int repetitions = 15;
  std::string decode = "auto";  // auto, portable, wgmma
  // Runs smaller than this are checked against the CPU reference (single-threaded: 2e8 flops take ~0.1 s).
  double reference_max_flops = 2e8;
};

struct KernelTiming {
  double stage1_us = 0;  // medians over the repetitions, L2 flushed before each
  double reduce_us = 0;
  double kernel_us = 0;  // stage 1 start to reduce end
  std::string kernel;    // the stage-1 kernel that ran and the reduce, e.g. "mla_decode_wgmma_persistent+mla_reduce"
  bool output_complete = false;         // every output element was written (none left at the poison value)
  std::optional<double> max_rel_error;  // against the CPU reference, when the run was small enough to check
};

struct StreamReadPoint {
  int active_sms = 0;
  int wg_per_sm = 0;
  double bytes = 0;
  double us = 0;
  double tbps = 0;
};

class KernelMeasurer {
 public:
  virtual ~KernelMeasurer() = default;
  virtual DeviceInfo device() const = 0;
  // Makes random inputs for `batch`, runs `plan` once to check its output, then times it.
  virtual KernelTiming measure(const sim::Plan& plan, const DecodeBatch& batch, const MeasureOptions& options) = 0;
  // Runs `plan` instrumented: the per-CU timeline of one run (L2 flushed, after warm-up runs) with the plan's
  // facts attached, and the kernel's event-timed median with and without instrumentation. The caller fills in
  // the workload, policy and provenance.
  virtual MeasuredTimeline record_timeline(const sim::Plan& plan, const DecodeBatch& batch,
                                           const MeasureOptions& options) = 0;
  // The streaming-read saturation curve: read bandwidth over active SMs and workgroups per SM.
  virtual std::vector<StreamReadPoint> stream_read_sweep() = 0;
};

// The GPU of this machine through this build's kernels. Throws InputError("validate", ...) when the build has
// no kernels or no GPU is present.
std::unique_ptr<KernelMeasurer> open_kernel_measurer();

}  // namespace mlasim::validate
