#pragma once
// The data dependencies of a simulated plan as a DAG (Boost.Graph): the kernel launch precedes each cluster's
// first work, the works of one cluster run in order, each partial work feeds its reduce tile, and each split tile
// feeds its output (a final work writes its output itself). Vertex weights
// are the simulated durations; the longest path is the time the step would take if every reduce tile could
// start as soon as its own partials are written (it is <= kernel_us, which waits for all of stage 1).
#include <span>
#include <vector>

namespace mlasim::sim {

struct ReduceGraphInput {
  std::span<const double> work_us;     // duration of each work (Plan::works order)
  std::span<const int> previous_work;  // the work run just before on the same cluster (grid: slot), or -1
  std::span<const int> work_tile;      // reduce tile a partial work feeds, or -1 for a final work
  std::span<const double> tile_us;     // reduce duration of each tile (reduce_indptr rows)
};

struct CriticalPath {
  double length_us = 0;
  std::vector<int> works;  // the works on the path, in execution order
  int tile = -1;           // the reduce tile on the path, or -1 when the path ends at a final work
};

// The longest path through the DAG, by topological sort. Throws std::invalid_argument when the spans
// disagree in length or `previous_work` forms a cycle.
CriticalPath reduce_critical_path(const ReduceGraphInput& in);

}  // namespace mlasim::sim
