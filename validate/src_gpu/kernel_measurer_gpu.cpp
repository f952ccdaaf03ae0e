// The measurer of builds with kernels: MlaRunner on device 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
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
    // The rows the kernel reads (a sparse plan's gathered rows, one query token each), not the requested context.
    const DecodeBatch& ran = problem.batch;
    const double flops = 2.0 * static_cast<double>(ran.total_kv_tokens()) * ran.max_qo_len() * ran.q_heads *
                         (DecodeBatch::kQkHeadDim + DecodeBatch::kVHeadDim);
    if (flops < o.reference_max_flops) {
      const auto e = kernels::compare_to_reference(out, kernels::mla_reference(problem));
      t.max_rel_error = e.has_nan ? std::numeric_limits<double>::quiet_NaN() : e.relative();
    }
    const kernels::StageTimes times = runner.time({o.warmup, o.repetitions, true});
    t.stage1_us = times.stage1_us;
    t.reduce_us = times.reduce_us;
    t.kernel_us = times.total_us;
    t.kernel = kernel_name(runner, plan);
    return t;
  }

  MeasuredTimeline record_timeline(const sim::Plan& plan, const DecodeBatch& batch, const MeasureOptions& o) override {
    const kernels::MlaProblem& problem = inputs_for(batch, plan);
    kernels::MlaRunner runner(plan, problem, kernels::parse_decode_kernel(o.decode));
    MeasuredTimeline t;
    t.kernel = kernel_name(runner, plan);
    t.kernel_us = runner.time({o.warmup, o.repetitions, true, false}).total_us;
    t.instrumented_kernel_us = runner.time({o.warmup, o.repetitions, true, true}).total_us;
    const kernels::RunStamps stamps = runner.record_stamps({o.warmup, 0, true, true});
    uint64_t origin = UINT64_MAX;
    std::vector<uint64_t> clock;
    for (const auto& s : stamps.stage1) origin = std::min(origin, s.begin_ns);
    const auto us = [origin](uint64_t ns) { return ns >= origin ? 1e-3 * static_cast<double>(ns - origin) : 0.0; };
    for (const auto& s : stamps.stage1) {
      MeasuredWork w;
      w.work = s.index;
      w.workgroup = s.workgroup;
      w.cu = s.cu;
      w.begin_us = us(s.begin_ns);
      w.first_kv_us = us(s.first_kv_ns);
      w.end_us = us(s.end_ns);
      w.sm_cycles = s.sm_cycles;
      t.works.push_back(w);
      clock.insert(clock.end(), {s.begin_ns, s.first_kv_ns, s.end_ns});
    }
    for (const auto& s : stamps.reduce) {
      t.reduce.push_back({s.index, s.cu, us(s.begin_ns), us(s.end_ns), s.sm_cycles});
      clock.insert(clock.end(), {s.begin_ns, s.end_ns});
    }
    // The timer's resolution as this run saw it: the smallest step between distinct stamps.
    std::sort(clock.begin(), clock.end());
    uint64_t step = 0;
    for (size_t i = 1; i < clock.size(); ++i)
      if (clock[i] > clock[i - 1] && (step == 0 || clock[i] - clock[i - 1] < step)) step = clock[i] - clock[i - 1];
    t.clock_step_ns = static_cast<double>(step);
    attach_plan_facts(t, plan);
    return t;
  }

  static std::string kernel_name(const kernels::MlaRunner& runner, const sim::Plan& plan) {
    const bool wgmma = runner.decode_kernel() == kernels::DecodeKernel::wgmma;
    return std::string(wgmma ? "mla_decode_wgmma_" : "mla_decode_") +
           (plan.kernel == sim::KernelKind::persistent ? "persistent" : "splitkv") + "+mla_reduce";
  }

  // A campaign runs every policy on one workload in a row: the inputs are made once for all of them (they depend
  // on the batch and on how the plan folds heads, not on the split).
  const kernels::MlaProblem& inputs_for(const DecodeBatch& batch, const sim::Plan& plan) {
    const std::string key = fmt::format(
        "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", fmt::join(batch.kv_lens, ","), fmt::join(batch.qo_lens, ","), batch.q_heads,
        dtype_name(batch.kv_dtype), batch.page_size, batch.kv_granularity, plan.derived.num_heads_eff,
        plan.derived.qk_batch_ratio, batch.topk, fmt::join(batch.topk_lens, ","), gathered_rows_name(plan.gathered));
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
