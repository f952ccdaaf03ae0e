#pragma once
// A plan in AITER's persistent-MLA buffer layout: per-cluster work lists and the reduce maps.
// Every planner policy returns this type, so the simulator, the kernels and the views never care which one ran.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "mlasim/model/gathered_rows.h"

namespace mlasim::sim {

// Marks a buffer entry the planner never writes (AITER leaves torch.empty garbage there; JSON shows null).
inline constexpr int32_t kUnwritten = std::numeric_limits<int32_t>::min();

// The most works one plan may hold (32 MiB of work_info rows). A batch of thousands of long requests split
// hundreds of ways would otherwise take seconds and gigabytes to plan and simulate; the planners refuse it with
// InputError("works", ...) instead. AITER's own v1 plans stay far below it (batch + CUs rows per q tile).
inline constexpr int64_t kMaxWorksPerPlan = int64_t{1} << 20;

// One row of work_info_set: one qo tile of one (virtual) batch over one contiguous KV range.
struct WorkInfo {
  int32_t batch_idx = 0;        // virtual batch (after head folding)
  int32_t partial_qo_loc = -1;  // -1: final bf16 output; else the row in the fp32 partial buffers
  int32_t qo_start = 0;         // global q/o rows [qo_start, qo_end)
  int32_t qo_end = 0;
  int32_t kv_start = 0;  // global kv_indices range [kv_start, kv_end), in pages
  int32_t kv_end = 0;
  int32_t kv_offset = 0;  // tokens between kv_end and the batch's end (causal masking for qlen > 1)
  int32_t pad = 0;

  bool is_partial() const { return partial_qo_loc >= 0; }
  int32_t qo_rows() const { return qo_end - qo_start; }
  int32_t kv_pages() const { return kv_end - kv_start; }
  bool operator==(const WorkInfo&) const = default;
};

// Which kind of kernel a plan feeds: AITER-style persistent static lists, or a grid the hardware schedules.
enum class KernelKind { persistent, grid };

inline std::string_view kernel_kind_name(KernelKind k) { return k == KernelKind::grid ? "grid" : "persistent"; }

// Sizes of the six metadata buffers (get_mla_metadata_info_v1).
struct BufferSizes {
  int work_metadata_ptrs = 2;
  int work_indptr = 0;
  int work_info_rows = 0;
  int reduce_indptr = 0;
  int reduce_final_map_rows = 0;
  int reduce_partial_map = 0;
};

// Values the planner derives on the host (aiter-v1-planner spec 4.1).
struct PlanDerived {
  int num_batches_eff = 0;  // B after head folding
  int num_heads_eff = 0;    // H: q heads per tile row group
  int num_clusters = 0;     // NC: work lists (persistent: one per cluster workgroup; grid: one per workgroup)
  int num_splits = 0;       // NS (the split budget the payload is computed with)
  int qk_batch_ratio = 1;   // R: virtual batches per request
  int fixed_over_head_num_blocks = 0;  // OV
  int tail_done_threshold = 0;
  int uni_seqlen_qo_param = -1;
};

// The planner's internal cost model, for display and checks.
struct PlanModel {
  int64_t sum_blocks = 0;
  int64_t payload_blocks = 0;
  int packed_qo_len_per_wg = 0;
  bool qo_splits = false;
  int tail_done_events = 0;
  int unassigned_tiles = 0;  // tiles left without a cluster (never seen in AITER's data; a bug if > 0)
};

struct Plan {
  std::string policy;  // the spec string that made it
  KernelKind kernel = KernelKind::persistent;
  // CUs (SMs) the kernel may occupy: the request's clusters, or the whole GPU; 0 = not recorded (a plan read
  // from JSON), i.e. the whole GPU. Not the number of work lists: a grid plan has one per workgroup, and AITER at
  // occupancy 2 has two per CU. The simulator places grid workgroups on at most this many CUs.
  int cu_limit = 0;
  // A sparse plan's convention: its requests are the sparse batch's query tokens, each over the rows
  // gathered_batch() gives it (none: a dense plan, its requests are the batch's).
  GatheredRows gathered = GatheredRows::none;
  PlanDerived derived;
  PlanModel model;
  BufferSizes buffers;

  // work_indptr: the whole buffer; entries [0, num_clusters] are written.
  std::vector<int32_t> work_indptr;
  std::vector<WorkInfo> works;  // work_info_set rows [0, num_works)
  // reduce_indptr: the whole buffer, every entry written.
  std::vector<int32_t> reduce_indptr;
  // reduce_final_map: (qo_start, qo_end) per reduce tile; kUnwritten for tiles AITER leaves untouched.
  std::vector<std::array<int32_t, 2>> reduce_final_map;
  std::vector<int32_t> reduce_partial_map;  // the written prefix [0, num_partials)

  // Request-level facts consumers need to run or draw the plan.
  int num_requests = 0;      // B0, before folding
  int num_heads = 0;         // total q heads
  int rows_per_partial = 1;  // partial rows a split fragment occupies (tsz of its tile, uniform qlen)

  int num_works() const { return static_cast<int>(works.size()); }
  int num_partials() const { return static_cast<int>(reduce_partial_map.size()); }
  // Output rows reduce tile t merges: its reduce_final_map range, or rows_per_partial where AITER left it unwritten.
  int reduce_tile_rows(int t) const {
    const bool written = t < static_cast<int>(reduce_final_map.size()) && reduce_final_map[t][0] != kUnwritten;
    return written ? reduce_final_map[t][1] - reduce_final_map[t][0] : rows_per_partial;
  }
  // Work lists, each walked by one workgroup: work_indptr has num_work_lists() + 1 written entries.
  int num_work_lists() const { return derived.num_clusters; }
  // AITER's name for num_work_lists() (derived.num_clusters, NC); kept for callers outside sim/.
  int num_clusters() const { return num_work_lists(); }
  // Number of reduce tiles that were actually emitted (split or not).
  int num_tiles() const { return num_tiles_; }
  void set_num_tiles(int n) { num_tiles_ = n; }
  // The original request of a virtual batch or a work (undoing head folding); a ratio left at 0 by a hand-built
  // plan counts as 1.
  int request_of_batch(int virtual_batch) const { return virtual_batch / std::max(derived.qk_batch_ratio, 1); }
  int request_of(const WorkInfo& w) const { return request_of_batch(w.batch_idx); }
  int head_group_of(const WorkInfo& w) const { return w.batch_idx % std::max(derived.qk_batch_ratio, 1); }
  // Works of work list c: [work_begin(c), work_end(c)).
  int work_begin(int c) const { return work_indptr[c]; }
  int work_end(int c) const { return work_indptr[c + 1]; }
  int active_clusters() const;
  // Fragments per original request (1 = not split).
  std::vector<int> splits_per_request() const;

 private:
  int num_tiles_ = 0;
};

}  // namespace mlasim::sim
