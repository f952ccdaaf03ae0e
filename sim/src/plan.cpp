#include "mlasim/sim/plan.h"

namespace mlasim::sim {

int Plan::active_clusters() const {
  int n = 0;
  for (int c = 0; c < num_clusters(); ++c) n += work_end(c) > work_begin(c) ? 1 : 0;
  return n;
}

std::vector<int> Plan::splits_per_request() const {
  // A request's splits: the most fragments any of its (head group, qo tile) pieces was cut into.
  std::vector<int> splits(static_cast<size_t>(num_requests), 0);
  std::vector<int> run(static_cast<size_t>(num_requests), 0);
  const WorkInfo* prev = nullptr;
  for (const WorkInfo& w : works) {
    const int r = request_of(w);
    const bool same_tile = prev && prev->batch_idx == w.batch_idx && prev->qo_start == w.qo_start;
    run[r] = same_tile ? run[r] + 1 : 1;
    if (run[r] > splits[r]) splits[r] = run[r];
    prev = &w;
  }
  return splits;
}

}  // namespace mlasim::sim
