#pragma once
// Plays a Plan on a GPU model and returns what happens over time (Timeline) and what it adds up to (Metrics).
// Persistent plans: one workgroup per cluster walks its list. Grid plans (KernelKind::grid, one work per
// workgroup in launch order, work_indptr[c] = c): list scheduling onto Plan::cu_limit CUs (0: the GPU's) with
// CostParams::grid_occupancy slots each (derived.num_clusters counts workgroups, not CUs).
// Stage 1 uses a fluid bandwidth model: each cluster streaming at a moment gets min(beta_cu, B_hbm / k).
// Stage 2 follows AITER's reduce launch rules (reduce_launch.h); a merged two-scope run adds the LSE merge of each
// token's streams after it, in the reduce's place on the timeline. The formulas are in docs/model.md.
#include <memory>
#include <optional>
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
  double stream_us = 0;  // end of the fixed part, start of the streaming part (begin_us <= stream_us <= end_us)
  double end_us = 0;
  int work = 0;      // index into Plan::works
  int request = 0;   // original request (after undoing head folding)
  int kv_start = 0;  // page range, as in the work
  int kv_end = 0;
  bool partial = false;
};

// One step of the reduce stage, after stage 1: a (tile, row group) merged by `heads` workgroups side by side,
// one per head (AITER's grid reduce, Triton's reduce), or one (tile, row group, head) item of a persistent
// AITER reduce block, whose items run back to back.
struct ReduceBox {
  double begin_us = 0;
  double end_us = 0;
  int tile = 0;  // reduce tile index (reduce_indptr row)
  int request = 0;
  int partials = 0;      // partials merged
  int head = 0;          // first head merged
  int heads = 1;         // workgroups side by side
  int row_group = 0;     // AITER's Wg split of the tile's rows
  int block = 0;         // first reduce workgroup, in launch order
  int cu = 0;            // CU of that workgroup (dispatch goes round-robin over the CUs)
  bool massive = false;  // AITER's n >= 4 path (LSE pass through LDS); 2..3 partials merge "simple"
  // The LSE merge of a merged two-scope run (after the reduce): `tile` is the merge's tile (a query token with
  // several streams), `partials` its streams, `request` its first stream.
  bool scope_merge = false;
};

struct Timeline {
  int num_clusters = 0;  // rows: persistent plans one per cluster; grid plans one per slot (CU x grid_occupancy)
  int rows_per_cu = 1;   // grid plans: row r is slot r % rows_per_cu of CU r / rows_per_cu
  std::vector<std::vector<TimelineBox>> rows;  // per row, sorted by begin_us, never overlapping
  std::vector<ReduceBox> reduce;               // the reduce stage, in launch order; begins at stage1_us
  double stage1_us = 0;
  double reduce_us = 0;
  double end_us() const { return stage1_us + reduce_us; }
};

// The predicted figures; the names are also the JSON/CSV keys (metrics_format.h).
struct Metrics {
  double stage1_us = 0;
  double reduce_us = 0;
  double kernel_us = 0;     // stage1 + reduce device time (what AITER's op test reports; no launch gap)
  double total_us = 0;      // + launch latencies (stage 1, and the reduce when partials exist) and the planner
  int active_clusters = 0;  // persistent: clusters with works; grid: CUs that ran a workgroup
  double occupancy = 0;     // mean fraction of clusters (grid: slots) busy during stage 1
  std::vector<int> splits_per_request;  // fragments per request: 1 unsplit, n for a tile merged from n partials
  int num_works = 0;
  int num_partials = 0;
  std::string kernel_class;      // the stage-1 kernel class costed (kernel_class.h)
  double kv_bytes = 0;           // KV bytes stage 1 streams (each head group's re-read counted, pass re-reads not)
  double read_bytes = 0;         // bytes read from memory: KV with pass re-reads, and the reduce's partials
  double stage1_read_bytes = 0;  // of these, stage 1's: the KV with pass re-reads, less what folded groups hit in L2
  double write_bytes = 0;        // bytes written: stage 1's partials and outputs, and the reduce's outputs
  double achieved_tbps = 0;      // kv_bytes / kernel_us
  double critical_path_us = 0;   // longest path works -> reduce tiles -> outputs (Boost.Graph, reduce_graph.h)
  bool operator==(const Metrics&) const = default;
};

struct Prediction {
  Timeline timeline;
  Metrics metrics;
};

// Simulates `plan` for `batch` on `gpu` with cost parameters `params`. Thread-safe (sweeps call it from many
// threads). Throws InputError for parameters out of range.
// `kernel` names the stage-1 kernel class that runs; nullopt: the one `auto` runs (kernel_choice.h).
Prediction simulate(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                    std::optional<KernelClassId> kernel = std::nullopt);

// The same Metrics as simulate(), without building the Timeline (for sweeps).
Metrics simulate_metrics(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                         std::optional<KernelClassId> kernel = std::nullopt);

}  // namespace mlasim::sim
