#pragma once
// Host API: uploads a Plan and a problem, runs stage 1 (persistent or grid kernel, by the plan's kind) and the
// reduce, reads the output back, and times the stages with events.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlasim/kernels/mla_problem.h"
#include "mlasim/sim/plan.h"

namespace mlasim::kernels {

struct StageTimes {
  double stage1_us = 0;  // medians over the repetitions
  double reduce_us = 0;
  double total_us = 0;  // stage 1 start to reduce end
};

struct TimingOptions {
  int warmup = 3;
  int repetitions = 20;
  bool flush_l2 = true;     // read a buffer twice the L2 size before every repetition (leaves the L2 clean)
  bool instrument = false;  // launch with the stamp buffers (record_stamps), to time what instrumentation costs
};

// What one workgroup of an instrumented run recorded: nanoseconds of the GPU's global clock.
struct WorkgroupStamp {
  int index = 0;      // stage 1: the work; reduce: the block
  int workgroup = 0;  // stage 1: the workgroup of the work's cluster (0, or 0..1 for SM pairs)
  int cu = 0;         // SM / CU id
  uint64_t begin_ns = 0, first_kv_ns = 0, end_ns = 0;  // first_kv: end of the work's fixed part (stage 1 only)
  uint32_t sm_cycles = 0;  // the SM's own clock from begin to end (its rate: the clock the SM ran at)
};

struct RunStamps {
  std::vector<WorkgroupStamp> stage1;  // one per (work, workgroup)
  std::vector<WorkgroupStamp> reduce;  // one per reduce block
};

// True when a GPU is present and usable.
bool gpu_available();
// "NVIDIA H100 80GB HBM3, driver 13000" style description of device 0.
std::string gpu_description();
int gpu_driver_version();
// True when the wgmma decode kernel is built (sm_90a) and device 0 is a compute capability 9.x GPU.
bool wgmma_decode_available();

// Which stage-1 kernel runs: the portable mma.sync/shuffle kernels, the Hopper wgmma kernels (bf16 or fp8 KV,
// sm_90a builds on a compute capability 9.x device), or automatic: the Hopper kernel wherever it can run, except
// for fp8 KV on pages of fewer than 16 tokens, where the portable kernel measured faster (see docs/kernels.md
// for the measurements behind this).
enum class DecodeKernel { automatic, portable, wgmma };
// "auto", "portable" or "wgmma"; throws InputError("decode", ...) for anything else.
DecodeKernel parse_decode_kernel(const std::string& name);
const char* decode_kernel_name(DecodeKernel k);

// A runner refers to `plan` and `problem` for its whole life (it reads both at each launch): they must outlive it.
class MlaRunner {
 public:
  MlaRunner(const sim::Plan& plan, const MlaProblem& problem, DecodeKernel kernel = DecodeKernel::automatic);
  // The kernel the runner chose ("portable" or "wgmma"), and the workgroups per cluster.
  DecodeKernel decode_kernel() const;
  int workgroups_per_cluster() const;
  ~MlaRunner();
  MlaRunner(const MlaRunner&) = delete;
  MlaRunner& operator=(const MlaRunner&) = delete;

  void run();  // stage 1 + reduce, then synchronize
  // Stage 1 + reduce queued on `stream` (a cudaStream_t / hipStream_t; nullptr: the default stream), without
  // waiting: for a caller that runs them inside a larger step (the decode-step validation, docs/step.md).
  void launch(void* stream);
  void poison_output();                  // fills the output with NaNs, so unwritten rows show
  std::vector<uint16_t> output() const;  // bf16 bits [q_rows, heads, 512]
  StageTimes time(const TimingOptions& options);
  // `options.warmup` plain runs, then one instrumented run (L2 flushed first when options.flush_l2), its stamps
  // read back. Throws GpuError when a workgroup left its stamp unwritten.
  RunStamps record_stamps(const TimingOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlasim::kernels
