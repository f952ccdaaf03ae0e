#pragma once
// The consistency every simulated timeline keeps (tests/sim/timeline_consistency_test.cpp checks the same on a
// fixed spread of cases): one row per cluster; boxes within [0, end] with begin <= stream <= end, never
// overlapping on a row; every work exactly once; reduce items (and a merged two-scope run's scope merge) after stage 1
// and within the kernel's end.
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_contract.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::fuzz {

inline void check_timeline(const sim::Plan& plan, const sim::Prediction& prediction) {
  constexpr double kEps = 1e-6;
  const sim::Timeline& tl = prediction.timeline;
  const double end = tl.end_us();
  require(std::isfinite(end) && tl.stage1_us >= 0 && tl.reduce_us >= 0, "timeline end not finite or negative");
  require(static_cast<int>(tl.rows.size()) == tl.num_clusters, "timeline rows != num_clusters");
  std::vector<int> seen(plan.works.size(), 0);
  for (const auto& row : tl.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      const sim::TimelineBox& b = row[i];
      require(b.begin_us >= 0 && b.begin_us <= b.stream_us && b.stream_us <= b.end_us && b.end_us <= end + kEps,
              "box outside [0, end] or begin <= stream <= end broken");
      require(i == 0 || row[i - 1].end_us <= b.begin_us + kEps, "boxes overlap on a row");
      require(b.work >= 0 && b.work < plan.num_works(), "box names no work of the plan");
      ++seen[static_cast<size_t>(b.work)];
    }
  }
  for (int count : seen) require(count == 1, "a work is not on the timeline exactly once");
  bool reduce_items = false;
  for (const sim::ReduceBox& r : tl.reduce) {
    require(r.begin_us >= tl.stage1_us - kEps && r.begin_us <= r.end_us && r.end_us <= end + kEps,
            "reduce item outside [stage1, end]");
    if (r.scope_merge) {  // a merged two-scope run's LSE merge: a token of several streams
      require(r.tile >= 0 && r.partials >= 2 && r.request >= 0 && r.request < plan.num_requests,
              "scope merge item names no token of several streams");
      continue;
    }
    reduce_items = true;
    require(r.tile >= 0 && r.tile + 1 < static_cast<int>(plan.reduce_indptr.size()), "reduce item names no tile");
  }
  require(reduce_items == (plan.num_partials() > 0), "reduce stage present iff partials exist");
  const sim::Metrics& m = prediction.metrics;
  require(std::abs(m.kernel_us - end) <= kEps * std::max(1.0, end), "kernel_us != timeline end");
  require(m.occupancy >= 0 && m.occupancy <= 1 + kEps, "occupancy outside [0, 1]");
}

}  // namespace mlasim::fuzz
