#pragma once
// A prediction sweep: every (GPU, batch, context, clusters) configuration under every policy, planned and
// simulated on all cores (TBB). Shared by `mlasim sweep` and the GUI's sweep view.
#include <functional>
#include <string>
#include <vector>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/report.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

struct SweepGrid {
  std::vector<Gpu> gpus;
  std::vector<int> batches;           // requests per batch, >= 1
  std::vector<int> contexts;          // KV tokens per request, >= 1
  std::vector<int> clusters{0};       // clusters available, 0 = every CU of the GPU
  std::vector<std::string> policies;  // policy specs
  DecodeBatch shape;                  // heads, dtypes, page size, granularity, causal; kv/qo lengths ignored
  int qo_len = 1;                     // query tokens per request
};

// One configuration x policy; the order is GPU, batch, context, clusters, then policy (innermost).
struct SweepPoint {
  int gpu = 0;  // index into SweepGrid::gpus
  int batch = 0;
  int context = 0;
  int clusters = 0;
  int policy = 0;  // index into SweepGrid::policies
};

struct SweepResult {
  std::vector<std::string> policies;  // canonical spec strings, as SweepPoint::policy indexes them
  std::vector<SweepPoint> points;
  std::vector<Metrics> metrics;  // one per point
};

// Number of points the grid holds.
size_t sweep_size(const SweepGrid& grid);

// Checks the whole grid before any work starts (each policy spec, each clusters value against each GPU, each
// batch shape) and throws InputError naming the offending flag and value.
void validate_sweep(const SweepGrid& grid);

// `progress(done, total)` is called from worker threads (it must be thread-safe) as chunks finish.
// An InputError raised while planning a point (e.g. a shape a policy does not support) propagates.
SweepResult run_sweep(const SweepGrid& grid, const std::function<void(size_t, size_t)>& progress = {});

// The points as report rows (configuration columns and metrics), in point order.
std::vector<ReportRow> report_rows(const SweepGrid& grid, const SweepResult& result);

}  // namespace mlasim::sim
