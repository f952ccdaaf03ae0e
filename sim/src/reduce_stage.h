#pragma once
// Stage 2 as fluid-engine input: AITER's mla_reduce_v1 for persistent plans, the Triton stage-2 reduce for grid
// plans (docs/model.md §4).
#include <span>
#include <vector>

#include "fluid_engine.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim::detail {

// What the simulator knows of each reduce tile (reduce_indptr row).
struct TileFacts {
  int partials = 0;  // n
  int rows = 0;      // output rows (tsz)
  int request = -1;  // original request, -1 when the tile has no partials
};

// One reduce work item: (tile, head, row group) in AITER, (request tile, head) in Triton.
struct ReduceItem {
  int tile = 0;
  int head = 0;
  bool massive = false;
};

struct ReduceStage {
  std::vector<FluidJob> jobs;      // one per item, in the order each block runs them
  std::vector<ReduceItem> items;   // parallel to jobs
  std::vector<int> task_begin;     // reduce blocks in launch order (blocks without work left out)
  int blocks_per_cu = 1;           // resident reduce blocks per CU
  std::vector<int> block_count, block_fill;  // scratch for grouping items by persistent block
};

// Fills `out` for `plan` (tiles described by `tiles`) on `num_cu` CUs. Tiles with fewer partials than the
// kernel merges (AITER: n <= 1; Triton: n == 0) cost nothing and get no item.
void build_reduce_stage(const Plan& plan, std::span<const TileFacts> tiles, int heads, int num_cu,
                        int max_seqlen_q, const CostParams& params, ReduceStage& out);

}  // namespace mlasim::sim::detail
