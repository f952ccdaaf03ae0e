#include "reduce_stage.h"

#include <algorithm>

#include "mlasim/sim/reduce_launch.h"

namespace mlasim::sim::detail {
namespace {

// Rows r in [0, rows) with r % groups == group: AITER's row group `group` takes rows group, group+Wg, ...
int rows_of_group(int rows, int group, int groups) { return group < rows ? (rows - group + groups - 1) / groups : 0; }

FluidJob item_job(int rows, int partials) {
  return FluidJob{0.0, reduce_read_bytes(rows, partials) + reduce_write_bytes(rows), 0.0};
}

void clear(ReduceStage& out) {
  out.jobs.clear();
  out.items.clear();
  out.task_begin.clear();
  out.task_begin.push_back(0);
}

// Ends the current block; its first item pays the block's fixed cost.
void close_block(ReduceStage& out, const CostParams& params) {
  const int begin = out.task_begin.back();
  if (static_cast<int>(out.jobs.size()) == begin) return;
  out.jobs[begin].fixed_us += params.reduce_block_us;
  out.task_begin.push_back(static_cast<int>(out.jobs.size()));
}

void build_aiter(std::span<const TileFacts> tiles, int heads, int num_cu, int max_seqlen_q, const CostParams& params,
                 ReduceStage& out) {
  const ReduceLaunch launch = aiter_reduce_launch(static_cast<int>(tiles.size()), heads, num_cu, max_seqlen_q);
  out.blocks_per_cu = kAiterReduceBlocksPerCu;
  const int wg = launch.row_groups;
  const int64_t per_tile = int64_t{heads} * wg;
  // Work item w = tile*H*Wg + group*H + head; only items of split tiles do anything, so walk those alone.
  // A grid block runs one item; persistent block b runs items b, b + blocks, b + 2 blocks, ...
  auto for_each_item = [&](auto&& fn) {
    for (int t = 0; t < static_cast<int>(tiles.size()); ++t) {
      const TileFacts& f = tiles[t];
      if (f.partials < 2) continue;
      for (int rest = 0; rest < per_tile; ++rest) {
        const int rows = rows_of_group(f.rows, rest / heads, wg);
        if (rows > 0) fn(t * per_tile + rest, ReduceItem{t, rest % heads, f.partials >= 4}, item_job(rows, f.partials));
      }
    }
  };
  if (!launch.persistent) {
    for_each_item([&](int64_t, const ReduceItem& item, const FluidJob& job) {
      out.jobs.push_back(job);
      out.items.push_back(item);
      close_block(out, params);
    });
    return;
  }
  // Persistent: group the items by block (a stable counting sort keeps each block's items in w order).
  std::vector<int>& count = out.block_count;
  count.assign(static_cast<size_t>(launch.blocks) + 1, 0);
  int n = 0;
  for_each_item([&](int64_t w, const ReduceItem&, const FluidJob&) {
    ++count[static_cast<size_t>(w % launch.blocks) + 1];
    ++n;
  });
  for (int b = 0; b < launch.blocks; ++b) count[b + 1] += count[b];
  out.jobs.resize(static_cast<size_t>(n));
  out.items.resize(static_cast<size_t>(n));
  std::vector<int>& fill = out.block_fill;
  fill.assign(count.begin(), count.end() - 1);
  for_each_item([&](int64_t w, const ReduceItem& item, const FluidJob& job) {
    const int at = fill[static_cast<size_t>(w % launch.blocks)]++;
    out.jobs[at] = job;
    out.items[at] = item;
  });
  for (int b = 0; b < launch.blocks; ++b) {
    if (count[b + 1] == count[b]) continue;
    out.jobs[count[b]].fixed_us += params.reduce_block_us;
    out.task_begin.push_back(count[b + 1]);
  }
}

void build_triton(std::span<const TileFacts> tiles, int heads, const CostParams& params, ReduceStage& out) {
  out.blocks_per_cu = kTritonReduceProgramsPerCu;
  // Grid (requests, heads): the request index varies fastest in launch order.
  for (int h = 0; h < heads; ++h) {
    for (int t = 0; t < static_cast<int>(tiles.size()); ++t) {
      const TileFacts& f = tiles[t];
      if (f.partials < 1 || f.rows == 0) continue;
      out.jobs.push_back(item_job(f.rows, f.partials));
      out.items.push_back({t, h, false});
      close_block(out, params);
    }
  }
}

}  // namespace

void build_reduce_stage(const Plan& plan, std::span<const TileFacts> tiles, int heads, int num_cu,
                        int max_seqlen_q, const CostParams& params, ReduceStage& out) {
  clear(out);
  if (plan.kernel == KernelKind::grid)
    build_triton(tiles, heads, params, out);
  else
    build_aiter(tiles, heads, num_cu, max_seqlen_q, params, out);
}

}  // namespace mlasim::sim::detail
