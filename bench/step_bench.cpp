// mlasim step on a trace of 10,000 kernels (100 steps of 10 layers of 10 kernels, Chrome-trace JSON with markers and
// launch correlation, as torch.profiler writes it): read, cut into steps, classed, and edited. Target: < 1 s.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "mlasim/model/gpu.h"
#include "mlasim/sim/workload.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/op_bytes.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_batches.h"
#include "mlasim/validate/step_what_if.h"

namespace mlasim::validate {
namespace {

std::string trace_of(int steps, int layers) {
  static const char* kNames[] = {"q_absorb_bmm_kernel",
                                 "CatArrayBatchedCopy<float>",
                                 "elementwise_kernel<128, 4>",
                                 "rope_kv_write_kernel",
                                 "memcpy128",
                                 "void mla_decode_wgmma_persistent_kernel<2>",
                                 "void mla_reduce_kernel<8>",
                                 "nvjet_sm90_tst_64x16",
                                 "splitKreduce_kernel",
                                 "vectorized_elementwise_kernel<4>"};
  nlohmann::json events = nlohmann::json::array();
  double t = 0;
  long long c = 0;
  for (int s = 0; s < steps; ++s) {
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "ProfilerStep#" + std::to_string(s)},
                      {"ts", t},
                      {"dur", 50}});
    for (int l = 0; l < layers; ++l)
      for (const char* name : kNames) {
        events.push_back({{"ph", "X"},
                          {"cat", "cuda_runtime"},
                          {"name", "cudaGraphLaunch"},
                          {"ts", t + 1},
                          {"dur", 1},
                          {"args", {{"correlation", c}}}});
        events.push_back({{"ph", "X"},
                          {"cat", "kernel"},
                          {"name", name},
                          {"ts", t + 100},
                          {"dur", 3.5},
                          {"args", {{"correlation", c}, {"stream", 7}}}});
        t += 5;
        ++c;
      }
    t += 400;
  }
  return nlohmann::json{{"traceEvents", events}}.dump();
}

void BM_StepTenThousandKernels(benchmark::State& state) {
  const std::string text = trace_of(100, 10);
  const StepRules rules = load_step_rules("mlasim-torch");
  const std::vector<StepEdit> edits = {parse_step_edit("fuse=q_prep:us=8"), parse_step_edit("remove=copy"),
                                       parse_step_edit("gaps=1")};
  for (auto _ : state) {
    const KernelTrace trace = parse_kernel_trace(text, "bench");
    const StepAnalysis a = analyse_steps(trace, rules, {});
    const StepWhatIf w = apply_step_edits(a, edits, {});
    benchmark::DoNotOptimize(w.after_summary.time_us);
  }
  state.counters["kernels"] = 10000;
}
BENCHMARK(BM_StepTenThousandKernels)->Unit(benchmark::kMillisecond);

// The step stack on an H100 with the ops' bytes given (mlasim step --op-bytes, the step stack's file): every kernel
// takes its bytes, and the fuse, the removal and a policy change weigh what the ops wrote and read into L2, and the
// write-back of what they left dirty, for each of the 1000 stage 1s. Timed with the flags' batch or each step's own.
struct StackWithOpBytes {
  std::string text = trace_of(100, 10);
  StepRules rules = load_step_rules("mlasim-torch");
  std::vector<StepEdit> edits = {parse_step_edit("fuse=q_prep:bytes=18743296:written=1179648"),
                                 parse_step_edit("remove=copy"), parse_step_edit("policy=fixed:splits=4"),
                                 parse_step_edit("gaps=1")};
  sim::WorkloadContext ctx = [] {
    sim::Workload workload;
    workload.gpu = "h100";
    workload.batch = sim::BatchSpec::uniform(16, 4096);
    workload.heads = 128;
    return sim::resolve(workload);
  }();
  OpBytesRules bytes = load_op_bytes(data_dir() + "/measurements/h100/step_interleaved/run1/op_bytes.json");

  void run(benchmark::State& state, const StepBatches* batches) const {
    for (auto _ : state) {
      const KernelTrace trace = parse_kernel_trace(text, "bench");
      const StepAnalysis a = analyse_steps(trace, rules, {});
      const StepWhatIf w = apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, &bytes, batches});
      benchmark::DoNotOptimize(w.after_summary.time_us);
    }
    state.counters["kernels"] = 10000;
  }
};

void BM_StepTenThousandKernelsWithOpBytes(benchmark::State& state) { StackWithOpBytes{}.run(state, nullptr); }
BENCHMARK(BM_StepTenThousandKernelsWithOpBytes)->Unit(benchmark::kMillisecond);

// The same with each step's own batch (mlasim step --step-batches), as a server's log gives it: 16 requests of
// different contexts that each grow by a token per step, so every one of the 100 steps is a batch of its own, planned
// under both policies and played for its write-back.
void BM_StepTenThousandKernelsWithStepBatches(benchmark::State& state) {
  const StackWithOpBytes stack;
  nlohmann::json steps = nlohmann::json::array();
  for (int s = 0; s < 100; ++s) {
    nlohmann::json kv = nlohmann::json::array();
    for (int r = 0; r < 16; ++r) kv.push_back(1000 + 937 * r + s);
    steps.push_back({{"kv_lens", kv}});
  }
  const StepBatches batches = step_batches_from_json(nlohmann::json{{"steps", steps}}.dump(), "bench", stack.ctx.batch);
  stack.run(state, &batches);
  state.counters["batches"] = 100;
}
BENCHMARK(BM_StepTenThousandKernelsWithStepBatches)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mlasim::validate
