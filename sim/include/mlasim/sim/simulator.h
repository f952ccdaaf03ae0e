#pragma once
// Plays a Plan on a GPU model and returns what happens over time (Timeline) and what it adds up to (Metrics).
// Persistent plans: one workgroup per cluster walks its list. Grid plans (KernelKind::grid, one work per
// workgroup, work_indptr[c] = c): list scheduling onto CUs with CostParams::grid_occupancy slots each.
// Stage 1 uses a fluid bandwidth model: each cluster streaming at a moment gets min(beta_cu, B_hbm / k).
#include <memory>
#include <string>
#include <vector>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// One work executed on one cluster (CU).
struct TimelineBox {
  double begin_us = 0;
  double end_us = 0;
  int work = 0;      // index into Plan::works
  int request = 0;   // original request (after undoing head folding)
  int kv_start = 0;  // page range, as in the work
  int kv_end = 0;
  bool partial = false;
};

// One reduce workgroup (or one reduce tile when grouped), after stage 1.
struct ReduceBox {
  double begin_us = 0;
  double end_us = 0;
  int tile = 0;      // reduce tile index (reduce_indptr row)
  int request = 0;
  int partials = 0;  // partials merged
};

struct Timeline {
  int num_clusters = 0;                        // rows: CUs of the GPU used by the kernel
  std::vector<std::vector<TimelineBox>> rows;  // per cluster, sorted by begin_us, never overlapping
  std::vector<ReduceBox> reduce;               // the reduce stage, begins at stage1_us
  double stage1_us = 0;
  double reduce_us = 0;
  double end_us() const { return stage1_us + reduce_us; }
};

// The predicted figures; the names are also the JSON/CSV keys.
struct Metrics {
  double stage1_us = 0;
  double reduce_us = 0;
  double kernel_us = 0;   // stage1 + reduce device time (what AITER's op test reports)
  double total_us = 0;    // + launch latencies and the planner
  int active_clusters = 0;
  double occupancy = 0;   // mean fraction of clusters busy during stage 1
  std::vector<int> splits_per_request;
  int num_works = 0;
  int num_partials = 0;
  double kv_bytes = 0;
  double achieved_tbps = 0;  // kv_bytes / kernel_us
  double critical_path_us = 0;  // longest path works -> reduce tiles -> outputs (Boost.Graph)
};

struct Prediction {
  Timeline timeline;
  Metrics metrics;
};

// Simulates `plan` for `batch` on `gpu` with cost parameters `params`.
Prediction simulate(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params);

}  // namespace mlasim::sim
