// `mlasim sweep` throughput: configurations planned, simulated and written as CSV rows per second, on all cores.
// Target (issue 3): >= 20 000 configurations per second on the 2-core CI machine.
#include <benchmark/benchmark.h>

#include "mlasim/model/gpu.h"
#include "mlasim/sim/report.h"
#include "mlasim/sim/sweep.h"

namespace mlasim::sim {
namespace {

// The README's kind of sweep: MI355X, batch 1..256 x context 1k..128k, the ATOM cap against the default.
SweepGrid readme_grid() {
  SweepGrid g;
  g.gpus = {load_gpu("mi355x")};
  g.batches = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
  g.contexts = {1024, 2048, 3000, 4096, 6000, 8192, 12000, 16384, 24000, 32768, 48000, 65536, 80000, 100000, 131072};
  g.policies = {"aiter-v1", "aiter-v1:max_split_per_batch=16"};
  g.shape = DecodeBatch::uniform(1, 1);
  return g;
}

void BM_SweepPredictions(benchmark::State& state) {
  const SweepGrid g = readme_grid();
  for (auto _ : state) {
    SweepResult r = run_sweep(g);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * sweep_size(g)));
}
BENCHMARK(BM_SweepPredictions)->Unit(benchmark::kMillisecond)->UseRealTime();

// What the command does: the sweep plus one labelled CSV row per point.
void BM_SweepToCsv(benchmark::State& state) {
  const SweepGrid g = readme_grid();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string csv = make_report_writer("csv")->table(report_rows(g, run_sweep(g)));
    bytes = csv.size();
    benchmark::DoNotOptimize(csv);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * sweep_size(g)));
  state.counters["csv_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SweepToCsv)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace mlasim::sim
