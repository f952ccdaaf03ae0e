#include "mlasim/sim/plan_checks.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <utility>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {

namespace {
std::vector<std::string> check_dense_plan(const Plan& p, const DecodeBatch& batch);
}  // namespace

std::vector<std::string> check_plan(const Plan& p, const DecodeBatch& batch) {
  if (!batch.is_sparse() && p.gathered == GatheredRows::none) return check_dense_plan(p, batch);
  // A sparse plan covers the per-token batch of its convention.
  try {
    return check_dense_plan(p, kernel_batch(p, batch));
  } catch (const InputError& e) {
    return {e.what()};
  }
}

namespace {

std::vector<std::string> check_dense_plan(const Plan& p, const DecodeBatch& batch) {
  std::vector<std::string> bad;
  const int nc = p.num_work_lists();
  if (p.work_indptr.size() < static_cast<size_t>(nc) + 1 || p.work_indptr[0] != 0) {
    bad.push_back("work_indptr must hold num_clusters + 1 entries starting at 0");
    return bad;
  }
  for (int c = 0; c < nc; ++c)
    if (p.work_indptr[c + 1] < p.work_indptr[c]) bad.push_back(fmt::format("work_indptr decreases at cluster {}", c));
  if (p.work_indptr[nc] != p.num_works())
    bad.push_back(fmt::format("work_indptr ends at {} but there are {} works", p.work_indptr[nc], p.num_works()));

  const int R = p.derived.qk_batch_ratio;
  const int n = batch.size();
  std::vector<int> qo_indptr(n + 1, 0), kv_indptr(n + 1, 0);
  for (int r = 0; r < n; ++r) {
    qo_indptr[r + 1] = qo_indptr[r] + batch.qo_lens[r];
    kv_indptr[r + 1] = kv_indptr[r] + batch.pages(r);
  }
  const int uni = batch.uniform_qo_len();
  auto qbeg = [&](int b) { return R > 1 ? b * uni : qo_indptr[b]; };

  // Group the works by tile, keeping work order.
  std::map<std::pair<int, int>, std::vector<int>> tiles;  // (virtual batch, qo_start) -> works
  for (int i = 0; i < p.num_works(); ++i) {
    const WorkInfo& w = p.works[i];
    if (w.batch_idx < 0 || w.batch_idx >= n * R) {
      bad.push_back(fmt::format("work {} names batch {} outside 0..{}", i, w.batch_idx, n * R - 1));
      return bad;
    }
    tiles[{w.batch_idx, w.qo_start}].push_back(i);
  }

  // Query rows of each virtual batch are partitioned by its tiles.
  std::vector<std::vector<std::pair<int, int>>> rows(static_cast<size_t>(n) * R);
  for (const auto& [key, works] : tiles) {
    const WorkInfo& w0 = p.works[works[0]];
    rows[key.first].push_back({w0.qo_start, w0.qo_end});
  }
  for (int b = 0; b < n * R; ++b) {
    auto& rs = rows[b];
    std::sort(rs.begin(), rs.end());
    int next = qbeg(b);
    for (const auto& [s, e] : rs) {
      if (s != next || e <= s) {
        bad.push_back(fmt::format("batch {}: query tiles do not partition rows (tile [{}, {}), expected start {})", b,
                                  s, e, next));
        break;
      }
      next = e;
    }
    if (next != qbeg(b) + batch.qo_lens[b / R])
      bad.push_back(
          fmt::format("batch {}: query rows covered up to {}, expected {}", b, next, qbeg(b) + batch.qo_lens[b / R]));
  }

  // KV coverage and partial bookkeeping per tile.
  // Partial rows as spans [loc, loc + rows) of the split fragments, checked for overlap once sorted: a set of rows
  // would cost a node per row, millions for the largest plans.
  std::vector<std::pair<int64_t, int64_t>> partial_spans;
  std::map<std::pair<int, int>, std::vector<int>> expected_reduce;  // (qo_start, qo_end) -> partial locs
  for (auto& [key, works] : tiles) {
    // A tile's fragments may sit anywhere in the work list (heap planners); coverage is checked in KV order.
    std::stable_sort(works.begin(), works.end(),
                     [&](int x, int y) { return p.works[x].kv_start < p.works[y].kv_start; });
    const int b = key.first, r = b / R;
    const WorkInfo& first = p.works[works.front()];
    const WorkInfo& last = p.works[works.back()];
    const int qlen = batch.qo_lens[r];
    const int last_token = last.qo_end - 1 - qbeg(b);
    const int visible = batch.causal ? batch.kv_lens[r] - (qlen - 1 - last_token) : batch.kv_lens[r];
    const int need_end = kv_indptr[r] + static_cast<int>(cdiv(visible, batch.page_size));
    int next = kv_indptr[r];
    for (int i : works) {
      const WorkInfo& w = p.works[i];
      if (w.qo_start != first.qo_start || w.qo_end != first.qo_end)
        bad.push_back(fmt::format("work {}: qo range differs within its tile", i));
      if (w.kv_start != next || w.kv_end <= w.kv_start) {
        bad.push_back(fmt::format("batch {} tile {}: work {} covers [{}, {}) but the next position is {}", b,
                                  key.second, i, w.kv_start, w.kv_end, next));
        break;
      }
      next = w.kv_end;
    }
    if (next < need_end || next > kv_indptr[r + 1])
      bad.push_back(fmt::format("batch {} tile {}: KV covered to page {}, needs {}..{}", b, key.second, next, need_end,
                                kv_indptr[r + 1]));
    if (works.size() == 1) {
      if (first.is_partial()) bad.push_back(fmt::format("work {}: unsplit tile writes a partial", works[0]));
      continue;
    }
    std::vector<int> locs;
    for (int i : works) {
      const WorkInfo& w = p.works[i];
      if (!w.is_partial()) {
        bad.push_back(fmt::format("work {}: fragment of a split tile writes final output", i));
        continue;
      }
      partial_spans.push_back({w.partial_qo_loc, int64_t{w.partial_qo_loc} + w.qo_rows()});
      locs.push_back(w.partial_qo_loc);
    }
    expected_reduce[{first.qo_start, first.qo_end}] = locs;
  }

  std::sort(partial_spans.begin(), partial_spans.end());
  int64_t rows_taken_to = std::numeric_limits<int64_t>::min();
  for (const auto& [begin, end] : partial_spans) {
    if (begin < end && begin < rows_taken_to) bad.push_back(fmt::format("partial row {} is used twice", begin));
    rows_taken_to = std::max(rows_taken_to, end);
  }

  // Reduce maps: every split tile listed once, with its partials in KV order.
  size_t listed = 0;
  for (size_t t = 0; t + 1 < p.reduce_indptr.size() && t < p.reduce_final_map.size(); ++t) {
    const int begin = p.reduce_indptr[t], end = p.reduce_indptr[t + 1];
    if (end < begin) {
      bad.push_back(fmt::format("reduce_indptr decreases at tile {}", t));
      continue;
    }
    if (end == begin) continue;
    const auto key = std::make_pair(p.reduce_final_map[t][0], p.reduce_final_map[t][1]);
    auto it = expected_reduce.find(key);
    if (it == expected_reduce.end()) {
      bad.push_back(
          fmt::format("reduce tile {} merges rows [{}, {}) that no split tile writes", t, key.first, key.second));
      continue;
    }
    const std::vector<int> got(p.reduce_partial_map.begin() + begin, p.reduce_partial_map.begin() + end);
    if (got != it->second) bad.push_back(fmt::format("reduce tile {}: partial map differs from its fragments", t));
    ++listed;
  }
  if (listed != expected_reduce.size())
    bad.push_back(fmt::format("{} split tiles but {} reduce tiles list partials", expected_reduce.size(), listed));
  return bad;
}

}  // namespace

}  // namespace mlasim::sim
