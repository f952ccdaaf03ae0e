// Plan + simulate one configuration (aiter-v1 on MI355X, 256 CUs) at batch 1, 64, 256, 1024, with mixed lengths
// (the hard case: every work a different size) and uniform ones (what a batch x context sweep plans).
// Target: plan + simulate <= 50 us at batch 256 (issue 3), so a 2-core sweep reaches >= 20000 configurations/s.
#include <benchmark/benchmark.h>

#include <random>

#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {
namespace {

// Mostly short chats with a tail of long contexts, as the planner benchmark uses.
DecodeBatch mixed_decode_batch(int batch) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(256, 131072);
  DecodeBatch b;
  for (int i = 0; i < batch; ++i) {
    b.kv_lens.push_back(rng() % 8 == 0 ? len(rng) : 256 + static_cast<int>(rng() % 8192));
    b.qo_lens.push_back(1);
  }
  return b;
}

const Gpu& mi355x() {
  static const Gpu gpu = load_gpu("mi355x");
  return gpu;
}

void report(benchmark::State& state, const Plan& plan, const Metrics& m) {
  state.counters["works"] = plan.num_works();
  state.counters["partials"] = plan.num_partials();
  state.counters["kernel_us"] = m.kernel_us;
}

void BM_PlanAndSimulateMetrics(benchmark::State& state) {
  const DecodeBatch batch = mixed_decode_batch(static_cast<int>(state.range(0)));
  const auto policy = make_policy("aiter-v1");
  const CostParams params = cost_params_for(mi355x());
  Plan plan;
  Metrics m;
  for (auto _ : state) {
    plan = policy->plan(PlanRequest{batch, mi355x(), 0});
    m = simulate_metrics(plan, batch, mi355x(), params);
    benchmark::DoNotOptimize(m);
  }
  report(state, plan, m);
}
BENCHMARK(BM_PlanAndSimulateMetrics)->Arg(1)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_PlanAndSimulateWithTimeline(benchmark::State& state) {
  const DecodeBatch batch = mixed_decode_batch(static_cast<int>(state.range(0)));
  const auto policy = make_policy("aiter-v1");
  const CostParams params = cost_params_for(mi355x());
  Plan plan;
  Prediction p;
  for (auto _ : state) {
    plan = policy->plan(PlanRequest{batch, mi355x(), 0});
    p = simulate(plan, batch, mi355x(), params);
    benchmark::DoNotOptimize(p);
  }
  report(state, plan, p.metrics);
}
BENCHMARK(BM_PlanAndSimulateWithTimeline)->Arg(1)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

// A sweep's configuration: every request 8000 tokens.
void BM_PlanAndSimulateUniform(benchmark::State& state) {
  const DecodeBatch batch = DecodeBatch::uniform(static_cast<int>(state.range(0)), 8000);
  const auto policy = make_policy("aiter-v1");
  const CostParams params = cost_params_for(mi355x());
  Plan plan;
  Metrics m;
  for (auto _ : state) {
    plan = policy->plan(PlanRequest{batch, mi355x(), 0});
    m = simulate_metrics(plan, batch, mi355x(), params);
    benchmark::DoNotOptimize(m);
  }
  report(state, plan, m);
}
BENCHMARK(BM_PlanAndSimulateUniform)->Arg(1)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

// The simulator alone on a fixed plan.
void BM_SimulateMetrics(benchmark::State& state) {
  const DecodeBatch batch = mixed_decode_batch(static_cast<int>(state.range(0)));
  const CostParams params = cost_params_for(mi355x());
  const Plan plan = make_policy("aiter-v1")->plan(PlanRequest{batch, mi355x(), 0});
  Metrics m;
  for (auto _ : state) {
    m = simulate_metrics(plan, batch, mi355x(), params);
    benchmark::DoNotOptimize(m);
  }
  report(state, plan, m);
}
BENCHMARK(BM_SimulateMetrics)->Arg(1)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

// 64 heads on the H100 (DeepSeek at TP2): aiter-v1 folds them into four head groups per request, and the simulator
// plays stage 1 twice to find which groups' reads hit the L2 (docs/model.md §2); the second argument 0 takes the
// side-by-side share instead (fold_l2_window 0, one play). The plans' mixed lengths as above.
void BM_PlanAndSimulateFolded(benchmark::State& state) {
  static const Gpu h100 = load_gpu("h100");
  DecodeBatch batch = mixed_decode_batch(static_cast<int>(state.range(0)));
  batch.q_heads = 64;
  batch.q_dtype = batch.kv_dtype = DType::bf16;
  batch.page_size = 64;
  const auto policy = make_policy("aiter-v1");
  CostParams params = cost_params_for(h100);
  if (state.range(1) == 0) params.fold_l2_window = 0;
  Plan plan;
  Metrics m;
  for (auto _ : state) {
    plan = policy->plan(PlanRequest{batch, h100, 0});
    m = simulate_metrics(plan, batch, h100, params);
    benchmark::DoNotOptimize(m);
  }
  report(state, plan, m);
}
BENCHMARK(BM_PlanAndSimulateFolded)
    ->ArgsProduct({{1, 64, 256}, {0, 1}})
    ->ArgNames({"batch", "timeline"})
    ->Unit(benchmark::kMicrosecond);

// ATOM's capped budget vs all clusters at batch 4 x 100000 (the README scenario), plan + simulate.
void BM_AtomScenario(benchmark::State& state) {
  const DecodeBatch batch = DecodeBatch::uniform(4, 100000);
  const auto policy =
      make_policy(state.range(0) ? "aiter-v1:max_split_per_batch=16" : "aiter-v1:max_split_per_batch=-1");
  const CostParams params = cost_params_for(mi355x());
  Plan plan;
  Metrics m;
  for (auto _ : state) {
    plan = policy->plan(PlanRequest{batch, mi355x(), 0});
    m = simulate_metrics(plan, batch, mi355x(), params);
    benchmark::DoNotOptimize(m);
  }
  report(state, plan, m);
}
BENCHMARK(BM_AtomScenario)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mlasim::sim
