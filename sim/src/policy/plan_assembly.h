#pragma once
// Shared by the policies other than aiter-v1: they decide which KV pieces of which tile run where, and
// PlanAssembler writes those decisions in AITER's buffer layout (work lists, partial rows, reduce maps).
//
// Tiles follow AITER's conventions. A request's heads may be folded into `head_groups` virtual batches
// (batch_idx = request x head_groups + group, q rows numbered in the virtual batches' row space, which needs
// one query length for every request); a virtual batch's q rows are cut into tiles of `tokens_per_tile` rows.
// Partial rows are numbered tile by tile in KV order, `rows_per_partial` apart.
// Kernels whose reduce also runs over unsplit requests (Triton's stage 2) are still written this way: the
// plan says which tiles need merging, the policy's kernel kind says how the reduce is launched.
#include <cstdint>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/int_math.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim::detail {

// Validates the batch and returns the clusters (CUs/SMs) the plan may use: PlanRequest::clusters, or the GPU.
int usable_clusters(const PlanRequest& request);

// How the q side of a request is cut: heads into virtual batches, query tokens into tiles.
struct TileShape {
  int head_groups = 1;       // R: virtual batches per request
  int heads_per_group = 16;  // heads each virtual batch carries
  int tokens_per_tile = 0;   // query tokens per tile; 0 = all of a virtual batch's tokens in one tile
};

// The shape of kernels that work on blocks of `rows` packed q rows (heads x tokens, heads fastest), e.g.
// FlashMLA's 64-row blocks. Throws InputError("heads", ...) when a block would cut a token's heads unevenly.
TileShape packed_row_blocks(const DecodeBatch& batch, int rows, const std::string& policy);

struct TileInfo {
  int batch = 0;  // virtual batch
  int request = 0;
  int32_t qo_start = 0;  // global q rows [qo_start, qo_end)
  int32_t qo_end = 0;
};

class PlanAssembler {
 public:
  // Throws InputError("qo_len", ...) when head folding meets non-uniform query lengths.
  PlanAssembler(const DecodeBatch& batch, const TileShape& shape, const std::string& policy);

  int num_tiles() const { return static_cast<int>(tiles_.size()); }
  const TileInfo& tile(int t) const { return tiles_[t]; }
  int tiles_per_batch(int virtual_batch) const { return tile_begin_[virtual_batch + 1] - tile_begin_[virtual_batch]; }
  // Tile `index` (0-based, in q order) of virtual batch `virtual_batch`.
  int tile_of(int virtual_batch, int index) const { return tile_begin_[virtual_batch] + index; }
  // For packed_row_blocks shapes: the tile of packed-row block `block` (0-based) of request `request`.
  int tile_of_block(int request, int block) const {
    const int R = shape_.head_groups;
    return R > 1 ? tile_of(request * R + block % R, block / R) : tile_of(request, block);
  }
  int num_batches() const { return static_cast<int>(tile_begin_.size()) - 1; }
  const TileShape& shape() const { return shape_; }

  // A persistent plan: appends to cluster `cluster`'s list the work of tile `t` over pages [begin, end) of
  // its request (relative to the request's first page). Throws InputError("works", ...) past kMaxWorksPerPlan.
  void add(int cluster, int t, int64_t begin, int64_t end);
  // A grid plan: the next workgroup in launch order runs tile `t` over pages [begin, end).
  void add_workgroup(int t, int64_t begin, int64_t end) { add(next_workgroup_++, t, begin, end); }

  // Builds the Plan. `num_clusters` is the persistent kernel's cluster count (its work lists); grid plans get
  // one work list per workgroup. A tile of one work writes the output (partial -1); the works of a split tile
  // write partials that one reduce tile lists in KV order. Fills works, reduce maps, buffer sizes and the derived
  // values the layout fixes; the policy sets derived.num_splits and the model values afterwards.
  Plan finish(KernelKind kernel, int num_clusters) const;

 private:
  struct Piece {
    int cluster;
    int tile;
    int64_t begin, end;
  };
  const DecodeBatch& batch_;
  TileShape shape_;
  std::string policy_;
  std::vector<TileInfo> tiles_;
  std::vector<int> tile_begin_;        // per virtual batch, plus the end
  std::vector<int64_t> request_page_;  // prefix sum of pages: request b's pages start at [b]
  std::vector<Piece> pieces_;
  int rows_per_partial_ = 1;
  int next_workgroup_ = 0;
};

}  // namespace mlasim::sim::detail
