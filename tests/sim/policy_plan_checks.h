#pragma once
// Checks for the policies' plans: the Plan contract of check_plan, plus what the policies promise beyond it
// (one work per workgroup in grid plans, kv_offset as AITER computes it, buffers sized to what was written).
//
// check_plan walks a tile's works in array order. The contract does not fix that order: FlashInfer's heap puts
// a tile's chunks on clusters in heap order, so a later chunk may sit on an earlier cluster. The contract is
// therefore checked on a copy whose works are sorted by (virtual batch, q rows, KV start); the work lists
// themselves are checked on the plan as it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/plan_checks.h"

namespace mlasim::sim::testing {

// `exact_buffers`: the buffer sizes equal the written sizes (the new policies), rather than AITER's sizing.
inline ::testing::AssertionResult plan_keeps_contract(const Plan& p, const DecodeBatch& batch,
                                                      bool exact_buffers = true) {
  const auto fail = [](const std::string& what) { return ::testing::AssertionFailure() << what; };
  Plan kv_ordered = p;
  std::stable_sort(kv_ordered.works.begin(), kv_ordered.works.end(), [](const WorkInfo& a, const WorkInfo& b) {
    return std::tie(a.batch_idx, a.qo_start, a.kv_start) < std::tie(b.batch_idx, b.qo_start, b.kv_start);
  });
  const auto violations = check_plan(kv_ordered, batch);
  if (!violations.empty())
    return fail(violations.front() + " (and " + std::to_string(violations.size() - 1) + " more)");

  const int B = batch.size();
  const int nc = p.num_work_lists();
  if (p.num_requests != B || p.num_heads != batch.q_heads) return fail("num_requests / num_heads");
  if (p.derived.num_batches_eff != B * p.derived.qk_batch_ratio) return fail("num_batches_eff");
  if (static_cast<int>(p.work_indptr.size()) < nc + 1) return fail("work_indptr size");
  if (p.kernel == KernelKind::grid) {
    if (nc != p.num_works()) return fail("grid plan: clusters != works");
    for (int c = 0; c <= nc; ++c)
      if (p.work_indptr[c] != c) return fail("grid plan: not one work per workgroup at " + std::to_string(c));
  }
  std::vector<int64_t> end_page(static_cast<size_t>(B));
  int64_t pages = 0;
  for (int b = 0; b < B; ++b) end_page[b] = pages += batch.pages(b);
  std::map<std::pair<int, int>, int> tiles;
  for (const WorkInfo& w : p.works) {
    const int b = w.batch_idx / p.derived.qk_batch_ratio;
    const int64_t to_end = end_page[b] - w.kv_end;
    const int64_t offset = to_end == 0 ? 0 : (to_end - 1) * batch.page_size + batch.last_page_len(b);
    if (w.kv_offset != offset) return fail("kv_offset of a work of request " + std::to_string(b));
    if (w.pad != 0) return fail("pad");
    ++tiles[{w.batch_idx, w.qo_start}];
  }
  if (static_cast<int>(tiles.size()) != p.num_tiles()) return fail("num_tiles");
  const BufferSizes& s = p.buffers;
  const std::vector<std::pair<int64_t, int64_t>> sizes = {
      {int64_t{s.work_indptr}, nc + 1},
      {int64_t{s.work_info_rows}, p.num_works()},
      {int64_t{s.reduce_indptr}, p.num_tiles() + 1},
      {int64_t{s.reduce_final_map_rows}, p.num_tiles()},
      {int64_t{s.reduce_partial_map}, p.num_partials()},
      {static_cast<int64_t>(p.work_indptr.size()), nc + 1},
      {static_cast<int64_t>(p.reduce_indptr.size()), p.num_tiles() + 1},
      {static_cast<int64_t>(p.reduce_final_map.size()), p.num_tiles()},
  };
  for (const auto& [have, used] : sizes)
    if (exact_buffers ? have != used : have < used)
      return fail("a buffer holds " + std::to_string(have) + " entries for " + std::to_string(used) + " written");
  return ::testing::AssertionSuccess();
}

// KV tokens each work reads, in work order (page size 1).
inline std::vector<int64_t> work_tokens(const Plan& p) {
  std::vector<int64_t> out;
  for (const WorkInfo& w : p.works) out.push_back(w.kv_pages());
  return out;
}

// The works of each request's most-cut (virtual batch, qo tile): how many pieces its KV was split into.
inline std::vector<int> pieces_per_request(const Plan& p) {
  std::map<std::pair<int, int>, int> per_tile;
  for (const WorkInfo& w : p.works) ++per_tile[{w.batch_idx, w.qo_start}];
  std::vector<int> out(static_cast<size_t>(p.num_requests), 0);
  for (const auto& [key, n] : per_tile) {
    const int r = key.first / p.derived.qk_batch_ratio;
    out[r] = std::max(out[r], n);
  }
  return out;
}

}  // namespace mlasim::sim::testing
