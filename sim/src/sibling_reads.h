#pragma once
// Folded head groups (a plan's R virtual batches per request) each read the request's KV. A group that reads a KV
// token shortly after a sibling group did finds it in the L2; one that reads it long after finds it evicted by the
// rest of the device's stream. Which case holds depends on where the planner put the groups (side by side on
// neighbouring clusters, or one after another), so the simulator measures it on its own timeline
// (docs/model.md §2).
#include <span>
#include <vector>

#include "fluid_engine.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim::detail {

// Token positions sampled along each work's KV range.
inline constexpr int kSiblingSamples = 8;

// Buffers reused by every call on a thread.
struct SiblingScratch {
  std::vector<int> order;     // the works that read KV, by (request, head group, first page)
  std::vector<int> runs;      // runs[r * R + g]: where request r's group g starts in `order`
  std::vector<double> reads;  // one sampled token's read times
};

// For each work of `plan` (its batch of `requests` requests), the share of its KV reads that the L2 serves because a
// sibling head group of its request read the same tokens just before. Per sampled token, the groups' reads in time
// order: the first misses, a later one `lag` us after the previous one misses 1 - 1 / (1 + (lag / window_us)^4)
// (window_us: the time the device takes to stream `fold_l2_window` L2 sizes), and reads at the same moment split
// their misses evenly (n groups side by side: 1 / n each). Works stream their KV range evenly over
// [stream_us, end_us] of `times`. Plans without folding, works that never ran and works outside the batch get 0.
void sibling_l2_shares(const Plan& plan, int requests, std::span<const FluidJobTimes> times, double window_us,
                       SiblingScratch& scratch, std::vector<double>& share);

}  // namespace mlasim::sim::detail
