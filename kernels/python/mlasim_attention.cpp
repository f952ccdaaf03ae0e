// A C interface to our MLA decode kernels for Python (ctypes): a workload and a split policy are planned by mlasim,
// their inputs made on the GPU once, and each call queues stage 1 + reduce on the caller's stream, so a PyTorch
// decode stack can put the real kernels in its step and profile them (scripts/step_validation.py, docs/step.md).
//
//   h = mlasim_attention_create('{"gpu": "h100", "batch": {...}, "heads": 128, ...}', "aiter-v1", err, 512)
//   mlasim_attention_launch(h, torch.cuda.current_stream().cuda_stream, err, 512)
//   mlasim_attention_time(h, 3, 20, 1, out, err, 512)   // the campaigns' event timing, out: stage 1, reduce, both
//   mlasim_attention_destroy(h)
#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "mlasim/kernels/mla_problem.h"
#include "mlasim/kernels/mla_runner.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/workload.h"

namespace {

// The runner keeps references to its plan and problem, so both live here, beside it, for as long as it does.
struct Attention {
  mlasim::sim::Plan plan;
  mlasim::kernels::MlaProblem problem;
  std::unique_ptr<mlasim::kernels::MlaRunner> runner;
  double predicted_us = 0;
};

void set_error(char* error, int error_len, const std::string& what) {
  if (error && error_len > 0) std::snprintf(error, static_cast<size_t>(error_len), "%s", what.c_str());
}

}  // namespace

extern "C" {

// Plans the workload (JSON as in scenario files) with `policy` and makes its inputs; nullptr with `error` filled
// on failure.
void* mlasim_attention_create(const char* workload_json, const char* policy, char* error, int error_len) {
  try {
    const mlasim::sim::Workload w = mlasim::sim::workload_from_json(nlohmann::json::parse(workload_json));
    const mlasim::sim::WorkloadContext ctx = mlasim::sim::resolve(w);
    const mlasim::sim::Evaluation e = mlasim::sim::evaluate(policy, ctx);
    auto a = std::make_unique<Attention>();
    a->plan = *e.plan;
    a->predicted_us = e.prediction->metrics.kernel_us;
    a->problem = mlasim::kernels::MlaProblem::make(ctx.batch, a->plan, 1);
    a->runner = std::make_unique<mlasim::kernels::MlaRunner>(a->plan, a->problem);
    return a.release();
  } catch (const std::exception& ex) {
    set_error(error, error_len, ex.what());
    return nullptr;
  }
}

// Queues stage 1 + reduce on `stream` (a cudaStream_t); 0 on success, else 1 with `error` filled.
int mlasim_attention_launch(void* handle, void* stream, char* error, int error_len) {
  try {
    static_cast<Attention*>(handle)->runner->launch(stream);
    return 0;
  } catch (const std::exception& ex) {
    set_error(error, error_len, ex.what());
    return 1;
  }
}

// Times stage 1 and the reduce as the validation campaigns do (MlaRunner::time: CUDA events around each stage on
// the default stream, the L2 flushed before each repetition when `flush_l2`), so that a profiler running around
// the call sees the same launches: medians into out[0] (stage 1), out[1] (reduce) and out[2] (both), in us.
// 0 on success, else 1 with `error` filled.
int mlasim_attention_time(void* handle, int warmup, int repetitions, int flush_l2, double* out, char* error,
                          int error_len) {
  try {
    mlasim::kernels::TimingOptions o;
    o.warmup = warmup;
    o.repetitions = repetitions;
    o.flush_l2 = flush_l2 != 0;
    const mlasim::kernels::StageTimes t = static_cast<Attention*>(handle)->runner->time(o);
    out[0] = t.stage1_us;
    out[1] = t.reduce_us;
    out[2] = t.total_us;
    return 0;
  } catch (const std::exception& ex) {
    set_error(error, error_len, ex.what());
    return 1;
  }
}

// The model's kernel_us for the plan (the GPU profile of the workload).
double mlasim_attention_predicted_us(void* handle) { return static_cast<Attention*>(handle)->predicted_us; }

// Works in the plan, and whether it has a reduce (partials).
int mlasim_attention_works(void* handle) { return static_cast<Attention*>(handle)->plan.num_works(); }
int mlasim_attention_partials(void* handle) { return static_cast<Attention*>(handle)->plan.num_partials(); }

void mlasim_attention_destroy(void* handle) { delete static_cast<Attention*>(handle); }

}  // extern "C"
