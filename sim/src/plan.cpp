#include "mlasim/sim/plan.h"

#include <map>
#include <utility>

namespace mlasim::sim {

int Plan::active_clusters() const {
  int n = 0;
  for (int c = 0; c < num_work_lists(); ++c) n += work_end(c) > work_begin(c) ? 1 : 0;
  return n;
}

std::vector<int> Plan::splits_per_request() const {
  // A request's splits: the most fragments any of its (head group, qo tile) pieces was cut into. The works of
  // one tile need not be adjacent (grid plans interleave requests; heap planners scatter fragments).
  std::map<std::pair<int32_t, int32_t>, int> fragments;  // (virtual batch, qo_start) -> works
  for (const WorkInfo& w : works) ++fragments[{w.batch_idx, w.qo_start}];
  std::vector<int> splits(static_cast<size_t>(num_requests), 0);
  for (const auto& [tile, n] : fragments) {
    const int r = request_of_batch(tile.first);
    if (r >= 0 && r < num_requests && n > splits[r]) splits[r] = n;
  }
  return splits;
}

}  // namespace mlasim::sim
