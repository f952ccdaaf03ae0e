#include "plan_assembly.h"

#include <algorithm>
#include <stdexcept>

#include "mlasim/model/input_error.h"

namespace mlasim::sim::detail {

int usable_clusters(const PlanRequest& r) {
  r.batch.validate();
  if (r.clusters < 0 || r.clusters > r.gpu.num_cu)
    throw InputError("clusters", "must be 1.." + std::to_string(r.gpu.num_cu) + " (the GPU's CUs), got " +
                                     std::to_string(r.clusters));
  return r.clusters > 0 ? r.clusters : r.gpu.num_cu;
}

TileShape packed_row_blocks(const DecodeBatch& batch, int rows, const std::string& policy) {
  const int h = batch.q_heads;
  if (h <= rows && rows % h == 0) return {1, h, rows / h};
  if (h > rows && h % rows == 0) return {h / rows, rows, 1};
  if (h < rows && batch.max_qo_len() == 1) return {1, h, 1};
  throw InputError("heads", policy + " packs heads x query tokens into blocks of " + std::to_string(rows) +
                                " rows, which would cut a token's " + std::to_string(h) +
                                " heads across blocks; use heads that divide " + std::to_string(rows) +
                                " or are multiples of it, or query length 1");
}

PlanAssembler::PlanAssembler(const DecodeBatch& batch, const TileShape& shape, const std::string& policy)
    : batch_(batch), shape_(shape), policy_(policy) {
  const int B = batch.size();
  const int R = shape.head_groups;
  const int uni = batch.uniform_qo_len();
  if (R > 1 && uni < 0)
    throw InputError("qo_len", policy + " folds " + std::to_string(batch.q_heads) + " heads into " + std::to_string(R) +
                                   " groups, which needs one query length for every request");
  request_page_.assign(static_cast<size_t>(B) + 1, 0);
  for (int b = 0; b < B; ++b) request_page_[b + 1] = request_page_[b] + batch.pages(b);

  tile_begin_.reserve(static_cast<size_t>(B) * R + 1);
  int32_t row = 0;
  for (int vb = 0; vb < B * R; ++vb) {
    const int b = vb / R;
    tile_begin_.push_back(static_cast<int>(tiles_.size()));
    const int32_t first = R > 1 ? vb * uni : row;
    const int32_t last = first + batch.qo_lens[b];
    const int step = shape.tokens_per_tile > 0 ? shape.tokens_per_tile : batch.qo_lens[b];
    for (int32_t q = first; q < last; q += step) tiles_.push_back({vb, b, q, std::min<int32_t>(q + step, last)});
    row = last;
  }
  tile_begin_.push_back(static_cast<int>(tiles_.size()));
  rows_per_partial_ = shape.tokens_per_tile > 0 ? shape.tokens_per_tile : batch.max_qo_len();
}

void PlanAssembler::add(int cluster, int t, int64_t begin, int64_t end) {
  if (begin < 0 || end <= begin || end > batch_.pages(tiles_[t].request))
    throw std::logic_error("plan assembly: a work's KV range is empty or outside its request");
  if (static_cast<int64_t>(pieces_.size()) >= kMaxWorksPerPlan)
    throw InputError("works", policy_ + " would cut this batch (" + std::to_string(batch_.size()) +
                                  " requests) into more than " + std::to_string(kMaxWorksPerPlan) +
                                  " works, the most one plan may hold; use fewer requests or fewer splits");
  pieces_.push_back({cluster, t, begin, end});
}

Plan PlanAssembler::finish(KernelKind kernel, int num_clusters) const {
  if (kernel == KernelKind::grid) num_clusters = next_workgroup_;
  const int T = num_tiles();

  // Each tile's pieces in KV order decide its partial rows and its reduce entry.
  std::vector<std::vector<int>> by_tile(static_cast<size_t>(T));
  for (int i = 0; i < static_cast<int>(pieces_.size()); ++i) {
    if (pieces_[i].cluster < 0 || pieces_[i].cluster >= num_clusters)
      throw std::logic_error("plan assembly: cluster out of range");
    by_tile[pieces_[i].tile].push_back(i);
  }
  Plan plan;
  plan.kernel = kernel;
  plan.reduce_indptr.reserve(static_cast<size_t>(T) + 1);
  plan.reduce_final_map.reserve(static_cast<size_t>(T));
  plan.reduce_indptr.push_back(0);
  std::vector<int32_t> partial_row(pieces_.size(), -1);
  int32_t next_row = 0;
  for (int t = 0; t < T; ++t) {
    auto& list = by_tile[t];
    if (list.empty()) throw std::logic_error("plan assembly: a tile has no work");
    std::sort(list.begin(), list.end(), [&](int a, int b) { return pieces_[a].begin < pieces_[b].begin; });
    if (list.size() > 1) {
      for (int i : list) {
        partial_row[i] = next_row;
        plan.reduce_partial_map.push_back(next_row);
        next_row += rows_per_partial_;
      }
      plan.reduce_final_map.push_back({tiles_[t].qo_start, tiles_[t].qo_end});
    } else {
      plan.reduce_final_map.push_back({kUnwritten, kUnwritten});
    }
    plan.reduce_indptr.push_back(static_cast<int32_t>(plan.reduce_partial_map.size()));
  }

  // Work lists: cluster by cluster, each in the order the policy added its works.
  std::vector<int32_t> count(static_cast<size_t>(num_clusters) + 1, 0);
  for (const Piece& p : pieces_) ++count[p.cluster + 1];
  for (int c = 0; c < num_clusters; ++c) count[c + 1] += count[c];
  plan.work_indptr = count;
  plan.works.resize(pieces_.size());
  for (int i = 0; i < static_cast<int>(pieces_.size()); ++i) {
    const Piece& p = pieces_[i];
    const TileInfo& tile = tiles_[p.tile];
    const int b = tile.request;
    const int64_t pages = batch_.pages(b);
    const int64_t offset = p.end == pages ? 0 : (pages - p.end - 1) * batch_.page_size + batch_.last_page_len(b);
    plan.works[count[p.cluster]++] = WorkInfo{tile.batch,
                                              partial_row[i],
                                              tile.qo_start,
                                              tile.qo_end,
                                              static_cast<int32_t>(request_page_[b] + p.begin),
                                              static_cast<int32_t>(request_page_[b] + p.end),
                                              static_cast<int32_t>(offset),
                                              0};
  }

  const int B = batch_.size();
  plan.num_requests = B;
  plan.num_heads = batch_.q_heads;
  plan.rows_per_partial = rows_per_partial_;
  plan.derived.num_batches_eff = B * shape_.head_groups;
  plan.derived.num_heads_eff = shape_.heads_per_group;
  plan.derived.num_clusters = num_clusters;
  plan.derived.qk_batch_ratio = shape_.head_groups;
  plan.derived.uni_seqlen_qo_param = batch_.uniform_qo_len();
  plan.set_num_tiles(T);
  plan.buffers.work_indptr = num_clusters + 1;
  plan.buffers.work_info_rows = plan.num_works();
  plan.buffers.reduce_indptr = T + 1;
  plan.buffers.reduce_final_map_rows = T;
  plan.buffers.reduce_partial_map = plan.num_partials();
  return plan;
}

}  // namespace mlasim::sim::detail
