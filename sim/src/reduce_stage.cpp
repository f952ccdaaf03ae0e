#include "reduce_stage.h"

#include <algorithm>

#include "mlasim/sim/reduce_launch.h"

namespace mlasim::sim::detail {
namespace {

// Rows r in [0, rows) with r % groups == group: AITER's row group `group` takes rows group, group+Wg, ...
int rows_of_group(int rows, int group, int groups) { return group < rows ? (rows - group + groups - 1) / groups : 0; }

// One item: its fixed cost, then its partials read and its output rows written. `width` workgroups run it side
// by side, each moving these bytes (they count into the stage's traffic).
FluidJob item_job(int rows, int partials, int width, const CostParams& params, ReduceStage& out) {
  const double read = reduce_read_bytes(rows, partials), write = reduce_write_bytes(rows);
  out.read_bytes += read * width;
  out.write_bytes += write * width;
  return FluidJob{params.reduce_item_us, read + write, 0.0};
}

// Workgroups one CU holds: the profile's measured residency where it has one (the wide form's for a launch
// with a tile of 16 or more partials, as our runner picks it), else the reduce kernel's own rule.
int reduce_blocks_per_cu(const CostParams& params, int kernel_rule, int max_partials) {
  if (max_partials >= kWideReducePartials && params.reduce_wide_blocks_per_cu > 0)
    return params.reduce_wide_blocks_per_cu;
  return params.reduce_blocks_per_cu > 0 ? params.reduce_blocks_per_cu : kernel_rule;
}

// A task of one job run by `width` workgroups side by side; it pays the block's fixed cost.
void add_task(ReduceStage& out, const FluidJob& job, const ReduceItem& item, int width, const CostParams& params) {
  out.jobs.push_back(job);
  out.jobs.back().fixed_us += params.reduce_block_us;
  out.items.push_back(item);
  out.task_begin.push_back(static_cast<int>(out.jobs.size()));
  out.task_width.push_back(width);
}

// AITER (spec §7): work item w = tile*H*Wg + group*H + head. A grid (H, Wg, NT) launches one block per item,
// heads fastest, so the H blocks of a (tile, group) start side by side and run in lockstep: one task of width H.
// A persistent launch has 16 CU blocks; block b runs items b, b + blocks, ... in turn.
void build_aiter(std::span<const TileFacts> tiles, int heads, int num_cu, int max_seqlen_q, const CostParams& params,
                 ReduceStage& out) {
  const ReduceLaunch launch = aiter_reduce_launch(static_cast<int>(tiles.size()), heads, num_cu, max_seqlen_q);
  int max_partials = 0;
  for (const TileFacts& f : tiles) max_partials = std::max(max_partials, f.partials);
  out.blocks_per_cu = reduce_blocks_per_cu(params, kAiterReduceBlocksPerCu, max_partials);
  const int wg = launch.row_groups;
  const int64_t per_tile = int64_t{heads} * wg;
  if (!launch.persistent) {
    for (int t = 0; t < static_cast<int>(tiles.size()); ++t) {
      const TileFacts& f = tiles[t];
      if (f.partials < 2) continue;  // n <= 1: stage 1 already wrote the output
      for (int g = 0; g < wg; ++g) {
        const int rows = rows_of_group(f.rows, g, wg);
        if (rows == 0) continue;
        const int block = static_cast<int>(t * per_tile + int64_t{g} * heads);
        add_task(out, item_job(rows, f.partials, heads, params, out),
                 ReduceItem{t, 0, heads, g, block, f.partials >= 4}, heads, params);
      }
    }
    return;
  }
  // Only items of split tiles do anything: collect those, grouped by block (a stable counting sort keeps each
  // block's items in w order).
  auto for_each_item = [&](auto&& fn) {
    for (int t = 0; t < static_cast<int>(tiles.size()); ++t) {
      const TileFacts& f = tiles[t];
      if (f.partials < 2) continue;
      int block = static_cast<int>(t * per_tile % launch.blocks);  // block of item w = t * per_tile + rest
      for (int g = 0; g < wg; ++g) {
        const int rows = rows_of_group(f.rows, g, wg);
        for (int h = 0; h < heads; ++h, block = block + 1 == launch.blocks ? 0 : block + 1)
          if (rows > 0) fn(block, ReduceItem{t, h, 1, g, block, f.partials >= 4}, rows, f.partials);
      }
    }
  };
  std::vector<int>& count = out.block_count;
  count.assign(static_cast<size_t>(launch.blocks) + 1, 0);
  int n = 0;
  for_each_item([&](int block, const ReduceItem&, int, int) {
    ++count[static_cast<size_t>(block) + 1];
    ++n;
  });
  for (int b = 0; b < launch.blocks; ++b) count[b + 1] += count[b];
  out.jobs.resize(static_cast<size_t>(n));
  out.items.resize(static_cast<size_t>(n));
  std::vector<int>& fill = out.block_fill;
  fill.assign(count.begin(), count.end() - 1);
  for_each_item([&](int block, const ReduceItem& item, int rows, int partials) {
    const int at = fill[static_cast<size_t>(block)]++;
    out.jobs[at] = item_job(rows, partials, 1, params, out);
    out.items[at] = item;
  });
  // Consecutive blocks running the same items for consecutive heads run in lockstep: one task, one more
  // workgroup wide. Their items after the first block's are dropped (the task's items stand for all heads).
  size_t kept = 0;
  int previous = -1;  // first kept item of the last task
  for (int b = 0; b < launch.blocks; ++b) {
    const int begin = count[b], n_items = count[b + 1] - count[b];
    if (n_items == 0) continue;  // a block with nothing to merge returns at once
    const bool lockstep =
        previous >= 0 && out.task_begin.back() - previous == n_items &&
        std::equal(out.items.begin() + begin, out.items.begin() + begin + n_items, out.items.begin() + previous,
                   [&](const ReduceItem& a, const ReduceItem& p) {
                     return a.tile == p.tile && a.row_group == p.row_group && a.head == p.head + out.task_width.back();
                   });
    if (lockstep) {
      ++out.task_width.back();
      for (int k = 0; k < n_items; ++k) out.items[previous + k].heads = out.task_width.back();
      continue;
    }
    previous = static_cast<int>(kept);
    for (int k = 0; k < n_items; ++k, ++kept) {
      out.jobs[kept] = out.jobs[begin + k];
      out.items[kept] = out.items[begin + k];
    }
    out.jobs[previous].fixed_us += params.reduce_block_us;
    out.task_begin.push_back(static_cast<int>(kept));
    out.task_width.push_back(1);
  }
  out.jobs.resize(kept);
  out.items.resize(kept);
}

// Triton (split-policies spec §1.5): grid (requests, heads), one program per (request tile, head) merging all
// of the tile's rows. The heads of a tile are taken as one task of width H (exact while the programs fit the
// slots at once, the usual case; when they do not, this groups by tile rather than by launch order).
void build_triton(std::span<const TileFacts> tiles, int heads, const CostParams& params, ReduceStage& out) {
  out.blocks_per_cu = kTritonReduceProgramsPerCu;  // a profile's measured residency is of the other reduce
  for (int t = 0; t < static_cast<int>(tiles.size()); ++t) {
    const TileFacts& f = tiles[t];
    if (f.partials < 1 || f.rows == 0) continue;
    add_task(out, item_job(f.rows, f.partials, heads, params, out), ReduceItem{t, 0, heads, 0, t, false}, heads,
             params);
  }
}

}  // namespace

void build_reduce_stage(ReduceKind kind, std::span<const TileFacts> tiles, int heads, int num_cu, int max_seqlen_q,
                        const CostParams& params, ReduceStage& out) {
  out.jobs.clear();
  out.items.clear();
  out.task_begin.assign(1, 0);
  out.task_width.clear();
  out.read_bytes = out.write_bytes = 0;
  if (kind == ReduceKind::triton)
    build_triton(tiles, heads, params, out);
  else
    build_aiter(tiles, heads, num_cu, max_seqlen_q, params, out);
}

}  // namespace mlasim::sim::detail
