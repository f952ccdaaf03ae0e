// The v1.2 planner on 256 CUs at batch 1 to 4096 with mixed lengths. Target: <= 10 us at batch 256.
#include <benchmark/benchmark.h>

#include <random>

#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/metadata_cost.h"

namespace mlasim::sim {
namespace {

AiterV1Args mixed_planner_args(int batch) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(256, 131072);
  AiterV1Args a;
  a.arch = Arch::gfx950;
  a.num_cu = 256;
  a.seqlens_kv_indptr = {0};
  a.seqlens_qo_indptr = {0};
  for (int i = 0; i < batch; ++i) {
    // Mixed lengths: mostly short chats with a tail of long contexts.
    const int l = rng() % 8 == 0 ? len(rng) : 256 + static_cast<int>(rng() % 8192);
    a.seqlens_kv_indptr.push_back(a.seqlens_kv_indptr.back() + l);
    a.seqlens_qo_indptr.push_back(a.seqlens_qo_indptr.back() + 1);
    a.kv_last_page_lens.push_back(1);
  }
  return a;
}

void BM_PlanAiterV1(benchmark::State& state) {
  const AiterV1Args a = mixed_planner_args(static_cast<int>(state.range(0)));
  int works = 0, items = 0;
  for (auto _ : state) {
    Plan p = plan_aiter_v1(a);
    works = p.num_works();
    items = metadata_items(p);
    benchmark::DoNotOptimize(p);
  }
  state.counters["works"] = works;
  // What a planner walks besides the CUs (metadata_cost.h): scripts/metadata_cost_fit.py fits the host build's time
  // to it (the CUs stay at 256 here, so their share is in the fit's fixed part).
  state.counters["items"] = items;
}
BENCHMARK(BM_PlanAiterV1)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mlasim::sim
