#pragma once
// Stage 2 as fluid-engine input: AITER's mla_reduce_v1 (the reduce of the persistent kernels and of ours), or the
// Triton stage-2 reduce of AITER's grid kernel, as the kernel class says (docs/model.md §4).
#include <span>
#include <vector>

#include "fluid_engine.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/model/kernel_class.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim::detail {

// What the simulator knows of each reduce tile (reduce_indptr row).
struct TileFacts {
  int partials = 0;  // n
  int rows = 0;      // output rows (tsz)
  int request = -1;  // original request, -1 when the tile has no partials
};

// One reduce step: a (tile, row group) merged by `heads` workgroups side by side, one per head (grid reduces),
// or one (tile, row group, head) item of a persistent reduce block.
struct ReduceItem {
  int tile = 0;
  int head = 0;  // first head
  int heads = 1;
  int row_group = 0;
  int block = 0;  // first workgroup, in launch order
  bool massive = false;
};

struct ReduceStage {
  std::vector<FluidJob> jobs;                // one per item, in the order each block runs them
  std::vector<ReduceItem> items;             // parallel to jobs
  std::vector<int> task_begin;               // reduce tasks in launch order (tasks without work left out)
  std::vector<int> task_width;               // workgroups of each task
  int blocks_per_cu = 1;                     // resident reduce workgroups per CU
  double read_bytes = 0, write_bytes = 0;    // the stage's memory traffic, all workgroups together
  std::vector<int> block_count, block_fill;  // scratch for grouping items by persistent block
};

// Fills `out` for the reduce `kind` (tiles described by `tiles`) on `num_cu` CUs. Tiles with fewer partials
// than the kernel merges (AITER: n <= 1; Triton: n == 0) cost nothing and get no item.
void build_reduce_stage(ReduceKind kind, std::span<const TileFacts> tiles, int heads, int num_cu, int max_seqlen_q,
                        const CostParams& params, ReduceStage& out);

}  // namespace mlasim::sim::detail
