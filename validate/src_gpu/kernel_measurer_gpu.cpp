// The measurer of builds with kernels: MlaRunner on device 0.
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <optional>

#include "mlasim/kernels/device_facts.h"
#include "mlasim/kernels/mla_reference.h"
#include "mlasim/kernels/mla_runner.h"
#include "mlasim/kernels/stream_read.h"
#include "mlasim/model/input_error.h"
#include "mlasim/validate/kernel_measurer.h"

namespace mlasim::validate {
namespace {

class GpuMeasurer final : public KernelMeasurer {
 public:
  GpuMeasurer() {
    const kernels::DeviceFacts facts = kernels::device_facts();
    info_.name = facts.name;
    info_.driver = "cuda-driver-api " + std::to_string(kernels::gpu_driver_version());
    info_.sm_clock_mhz = facts.sm_clock_mhz;
    info_.mem_clock_mhz = facts.mem_clock_mhz;
    info_.multiprocessors = facts.multiprocessors;
  }

  DeviceInfo device() const override { return info_; }

  KernelTiming measure(const sim::Plan& plan, const DecodeBatch& batch, const MeasureOptions& o) override {
    const kernels::MlaProblem& problem = inputs_for(batch, plan);
    kernels::MlaRunner runner(plan, problem, kernels::parse_decode_kernel(o.decode));
    runner.poison_output();
    runner.run();
    const std::vector<uint16_t> out = runner.output();
    KernelTiming t;
    t.output_complete = true;
    for (uint16_t bits : out)
      if ((bits & 0x7f80) == 0x7f80 && (bits & 0x7f)) {  // a bf16 NaN: the poison was never overwritten
        t.output_complete = false;
        break;
      }
    const double flops = 2.0 * static_cast<double>(batch.total_kv_tokens()) * batch.max_qo_len() * batch.q_heads *
                         (DecodeBatch::kQkHeadDim + DecodeBatch::kVHeadDim);
    if (flops < o.reference_max_flops) {
      const auto e = kernels::compare_to_reference(out, kernels::mla_reference(problem));
      t.max_rel_error = e.has_nan ? std::numeric_limits<double>::quiet_NaN() : e.relative();
    }
    const kernels::StageTimes times = runner.time({o.warmup, o.repetitions, true});
    t.stage1_us = times.stage1_us;
    t.reduce_us = times.reduce_us;
    t.kernel_us = times.total_us;
    const bool wgmma = runner.decode_kernel() == kernels::DecodeKernel::wgmma;
    t.kernel = std::string(wgmma ? "mla_decode_wgmma_" : "mla_decode_") +
               (plan.kernel == sim::KernelKind::persistent ? "persistent" : "splitkv") + "+mla_reduce";
    return t;
  }

  // A campaign runs every policy on one workload in a row: the inputs are made once for all of them (they depend
  // on the batch and on how the plan folds heads, not on the split).
  const kernels::MlaProblem& inputs_for(const DecodeBatch& batch, const sim::Plan& plan) {
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", fmt::join(batch.kv_lens, ","), fmt::join(batch.qo_lens, ","),
                    batch.q_heads, dtype_name(batch.kv_dtype), batch.page_size, batch.kv_granularity,
                    plan.derived.num_heads_eff, plan.derived.qk_batch_ratio);
    if (!problem_ || key != problem_key_) {
      problem_.reset();  // free the old inputs before making the new ones
      problem_ = kernels::MlaProblem::make(batch, plan, 7);
      problem_key_ = key;
    }
    return *problem_;
  }

  std::vector<StreamReadPoint> stream_read_sweep() override {
    std::vector<int> sms;
    for (int n : {1, 2, 4, 8, 16, 24, 32, 48, 64, 80, 96, 112, 132})
      if (n <= info_.multiprocessors) sms.push_back(n);
    if (sms.back() != info_.multiprocessors) sms.push_back(info_.multiprocessors);
    std::vector<StreamReadPoint> out;
    for (const auto& p : kernels::stream_read_sweep(sms, {1, 2, 3, 4}, int64_t{48} << 20, 5))
      out.push_back({p.active_sms, p.wg_per_sm, static_cast<double>(p.bytes), p.us, p.tbps});
    return out;
  }

 private:
  DeviceInfo info_;
  std::optional<kernels::MlaProblem> problem_;
  std::string problem_key_;
};

}  // namespace

std::unique_ptr<KernelMeasurer> open_kernel_measurer() {
  if (!kernels::gpu_available())
    throw InputError("validate", "no GPU found on this machine; run campaigns where one is, or use --dry-run");
  return std::make_unique<GpuMeasurer>();
}

}  // namespace mlasim::validate
