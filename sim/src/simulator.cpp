#include "mlasim/sim/simulator.h"

#include <algorithm>

#include "fluid_engine.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/kernel_choice.h"
#include "mlasim/sim/reduce_graph.h"
#include "mlasim/sim/split_policy.h"
#include "reduce_stage.h"
#include "sibling_reads.h"

namespace mlasim::sim {
namespace {

using detail::FluidJob;
using detail::FluidJobTimes;

// Buffers reused by every simulation on a thread, so a warm simulation allocates only its results.
struct Scratch {
  std::vector<FluidJob> jobs;
  std::vector<FluidJobTimes> times;
  std::vector<int> tasks;
  detail::FluidScratch fluid;
  std::vector<int64_t> request_end_page;
  std::vector<int> loc_tile;  // partial row -> reduce tile
  std::vector<detail::TileFacts> tiles;
  detail::ReduceStage reduce;
  std::vector<FluidJobTimes> reduce_times;
  std::vector<detail::TileFacts> merge_tiles;  // a merged two-scope run: one tile per token of several streams
  detail::ReduceStage merge;
  std::vector<FluidJobTimes> merge_times;
  std::vector<double> work_us, tile_us;
  std::vector<int> previous_work, work_tile, slot_last, work_row;
  std::vector<char> cu_used;
  std::vector<double> sibling_share;  // per work: share of its KV a sibling head group read just before
  detail::SiblingScratch sibling;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

int heads_per_row(const Plan& plan, const DecodeBatch& batch) {
  return plan.derived.num_heads_eff > 0 ? plan.derived.num_heads_eff : batch.q_heads;
}

// The stage-1 cost of every work on kernel class `cls` (docs/model.md §2). `sibling_share` (per work, see
// sibling_reads.h) tells how much of each folded work's KV a sibling head group read just before; empty: the share
// (R - 1) / R of every work, as if a request's R groups ran side by side.
void build_stage1_jobs(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& p,
                       const KernelClass& cls, const KernelClassParams& cp, std::span<const double> sibling_share,
                       Scratch& s, Metrics& m) {
  const int B = batch.size();
  s.request_end_page.resize(static_cast<size_t>(B));
  int64_t pages = 0;
  for (int r = 0; r < B; ++r) s.request_end_page[r] = pages += batch.pages(r);

  const bool grid = plan.kernel == KernelKind::grid;
  const int heads = heads_per_row(plan, batch);
  const int kv_elem = dtype_bytes(batch.kv_dtype);
  const bool fp8_math = batch.q_dtype == DType::fp8 && batch.kv_dtype == DType::fp8 && !takes_bf16_q(cls.id);
  const DType math = fp8_math ? DType::fp8 : DType::bf16;
  // A cluster computes on all of its CUs.
  const double flops_per_us = gpu.matrix_tflops(math) * 1e6 * cp.matrix_efficiency / gpu.num_cu * cls.cus_per_cluster;
  constexpr double kFlopsPerRowToken = 2.0 * (DecodeBatch::kQkHeadDim + DecodeBatch::kVHeadDim);

  // Folded head groups of a request read the same KV; what a sibling read shortly before hits the L2 but for
  // fold_reread_fraction of it, and loads the device's bandwidth no more.
  const int fold = std::max(plan.derived.qk_batch_ratio, 1);
  const double side_by_side = double(fold - 1) / fold;
  // Rows gathered one by one (page size 1) cost more than pages read in runs.
  const double gather = batch.page_size == 1 ? 1.0 + p.gather_extra_read : 1.0;
  s.jobs.resize(plan.works.size());
  m.kv_bytes = m.read_bytes = m.stage1_read_bytes = m.write_bytes = 0;
  for (size_t i = 0; i < plan.works.size(); ++i) {
    const WorkInfo& w = plan.works[i];
    const int r = std::clamp(plan.request_of(w), 0, B - 1);
    int64_t tokens = int64_t{w.kv_pages()} * batch.page_size;
    if (batch.page_size > 1 && w.kv_end == s.request_end_page[r]) tokens -= batch.page_size - batch.last_page_len(r);
    tokens = std::max<int64_t>(tokens, 0);
    const int tile_rows = w.qo_rows() * heads;
    const double rows = double(tile_rows);
    const int passes = kv_passes(cls, tile_rows);
    const double kv = double(tokens) * DecodeBatch::kQkHeadDim * kv_elem;
    // The work streams all of its passes' KV; what a sibling group read just before comes from the L2.
    const double streamed = kv * (1.0 + (passes - 1) * cp.reread_fraction);
    const double shared = fold > 1 ? (sibling_share.empty() ? side_by_side : sibling_share[i]) : 0.0;
    const double read = streamed * (1.0 - shared * (1.0 - p.fold_reread_fraction));
    const double out = w.is_partial() ? rows * (4.0 * DecodeBatch::kVHeadDim + 4) : rows * 2.0 * DecodeBatch::kVHeadDim;
    // The MMAs run on padded rows: a 16-row tile on a 64-row wgmma, the unused half of a 32-row pass.
    const double math_rows = double(math_rows_per_cu(cls, tile_rows)) * cls.cus_per_cluster;
    const double flops = kFlopsPerRowToken * math_rows * double(tokens);
    FluidJob& job = s.jobs[i];
    if (grid && tokens == 0) {  // a grid workgroup past its request's end exits at once
      job = FluidJob{p.grid_block_us, 0.0, 0.0};
      continue;
    }
    // A producer that issues one copy per page pays for each copy on every pass; the streaming does not hide it.
    job.fixed_us = cp.t_fix_us + passes * cp.t_pass_us + (grid ? p.grid_block_us : 0.0) +
                   double(passes) * double(page_copies(cls, tokens, batch.page_size)) * cp.page_copy_us;
    // The time of the bytes: L2 hits cost the work its own stream but not the device's bandwidth. The metrics
    // count the bytes themselves, and the reads from memory only.
    job.bytes = streamed * gather + out;
    job.memory_share = job.bytes > 0 ? (read * gather + out) / job.bytes : 1.0;
    job.min_stream_us = flops_per_us > 0 ? flops / flops_per_us * (grid ? cp.grid_stream_factor : 1.0) : 0.0;
    m.kv_bytes += kv;
    m.read_bytes += read;
    m.stage1_read_bytes += read;
    m.write_bytes += out;
  }
  // A persistent cluster reads its work list before its first work.
  if (!grid)
    for (int c = 0; c < plan.num_work_lists(); ++c)
      if (plan.work_indptr[c] < plan.work_indptr[c + 1])
        s.jobs[plan.work_indptr[c]].fixed_us += p.persistent_cluster_us;
}

// Reduce-tile facts: partial count, rows, and the request (through the first partial's work).
void build_tile_facts(const Plan& plan, const DecodeBatch& batch, Scratch& s) {
  const int T = std::max<int>(static_cast<int>(plan.reduce_indptr.size()) - 1, 0);
  s.tiles.assign(static_cast<size_t>(T), {});
  int max_loc = -1;
  for (const WorkInfo& w : plan.works) max_loc = std::max(max_loc, w.partial_qo_loc);
  s.loc_tile.assign(static_cast<size_t>(max_loc + 1), -1);
  const int num_partials = plan.num_partials();
  for (int t = 0; t < T; ++t) {
    const int b = std::clamp(plan.reduce_indptr[t], 0, num_partials);
    const int e = std::clamp(plan.reduce_indptr[t + 1], b, num_partials);
    detail::TileFacts& f = s.tiles[t];
    f.partials = e - b;
    f.rows = plan.reduce_tile_rows(t);
    for (int k = b; k < e; ++k) {
      const int loc = plan.reduce_partial_map[k];
      if (loc >= 0 && loc <= max_loc) s.loc_tile[loc] = t;
    }
  }
  s.work_tile.resize(plan.works.size());
  for (size_t i = 0; i < plan.works.size(); ++i) {
    const WorkInfo& w = plan.works[i];
    const int t = w.is_partial() ? s.loc_tile[w.partial_qo_loc] : -1;
    s.work_tile[i] = t;
    if (t >= 0 && s.tiles[t].request < 0) s.tiles[t].request = std::clamp(plan.request_of(w), 0, batch.size() - 1);
  }
}

// A merged two-scope run (DecodeBatch::merged_tokens): one tile per query token with more than one stream, of one
// output row and one partial per stream, whose first stream is `request`. Tokens of one stream need no merge: the
// stage-1 kernel or the reduce that finishes their output folds the sink.
void build_merge_tiles(const DecodeBatch& batch, Scratch& s) {
  s.merge_tiles.clear();
  for (const auto& token : batch.merged_tokens()) s.merge_tiles.push_back({token.streams, 1, token.first});
}

// Plays a built reduce-kernel stage (the reduce, or a two-scope run's merge) from `start_us` on every CU at the
// reduce's bandwidth; adds its memory traffic to `m` and returns its end.
double run_reduce_kernel(detail::ReduceStage& stage, std::vector<FluidJobTimes>& times, double start_us, const Gpu& gpu,
                         const CostParams& p, Scratch& s, Metrics& m) {
  times.assign(stage.jobs.size(), {});
  const double beta = (p.reduce_beta_gbps > 0 ? p.reduce_beta_gbps : p.beta_cu_gbps) * 1e3;
  const double end = detail::run_fluid({gpu.num_cu * stage.blocks_per_cu, beta, p.b_hbm_tbps * 1e6, p.bw_knee},
                                       stage.jobs, stage.task_begin, stage.task_width, start_us, times, s.fluid);
  m.read_bytes += stage.read_bytes;
  m.write_bytes += stage.write_bytes;
  return end;
}

// A reduce-kernel stage's items as timeline boxes.
void add_reduce_boxes(Timeline& tl, const detail::ReduceStage& stage, const std::vector<detail::TileFacts>& tiles,
                      const std::vector<FluidJobTimes>& times, int num_cu, bool scope_merge) {
  tl.reduce.reserve(tl.reduce.size() + stage.items.size());
  for (size_t k = 0; k < stage.items.size(); ++k) {
    const detail::ReduceItem& item = stage.items[k];
    const detail::TileFacts& f = tiles[item.tile];
    tl.reduce.push_back({times[k].begin_us, times[k].end_us, item.tile, f.request, f.partials, item.head, item.heads,
                         item.row_group, item.block, item.block % num_cu, item.massive, scope_merge});
  }
}

Metrics run(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& p,
            std::optional<KernelClassId> kernel, Timeline* timeline) {
  validate_cost_params(p);
  const KernelClass& cls = kernel_class(kernel ? *kernel : auto_kernel_class(plan, batch, gpu));
  const KernelClassParams cp = p.resolved(cls.id);
  Scratch& s = scratch();
  const bool grid = plan.kernel == KernelKind::grid;
  const int W = plan.num_works();
  const int lists = plan.num_work_lists();
  if (!grid &&
      (lists < 0 || static_cast<int>(plan.work_indptr.size()) < lists + 1 || plan.work_indptr[0] != 0 ||
       plan.work_indptr[lists] != W || !std::is_sorted(plan.work_indptr.begin(), plan.work_indptr.begin() + lists + 1)))
    throw InputError("plan.work_indptr", "must rise from 0 to the work count over num_clusters + 1 entries");
  Metrics m;

  // Stage 1. A folded plan whose L2 hits follow its timeline is played first with every group reading all of its KV.
  const bool sibling_timeline = plan.derived.qk_batch_ratio > 1 && p.fold_l2_window > 0 && gpu.l2_mib > 0;
  if (sibling_timeline) s.sibling_share.assign(plan.works.size(), 0.0);
  build_stage1_jobs(plan, batch, gpu, p, cls, cp,
                    sibling_timeline ? std::span<const double>(s.sibling_share) : std::span<const double>(), s, m);
  // A grid's workgroups go to the CUs the plan may use (its work lists are one per workgroup, not CUs). A class
  // whose cluster takes several CUs fits fewer clusters at once: the rest wait for a free place, in order.
  const int cluster_places = std::max(gpu.num_cu / cls.cus_per_cluster, 1);
  const int cus =
      grid ? std::max((plan.cu_limit > 0 ? std::min(plan.cu_limit, gpu.num_cu) : gpu.num_cu) / cls.cus_per_cluster, 1)
           : 0;
  const int per_cu = grid ? p.grid_occupancy : 1;
  const int slots = grid ? cus * per_cu : std::min(lists, cluster_places);
  std::span<const int> tasks;
  if (grid) {
    s.tasks.resize(static_cast<size_t>(W) + 1);
    for (int i = 0; i <= W; ++i) s.tasks[i] = i;
    tasks = s.tasks;
  } else {
    tasks = std::span<const int>(plan.work_indptr.data(), static_cast<size_t>(lists) + 1);
  }
  const double bytes_per_us_hbm = p.b_hbm_tbps * 1e6;
  s.times.assign(static_cast<size_t>(W), {});
  const double beta = cp.beta_gbps * 1e3 / (grid ? cp.grid_stream_factor : 1.0);
  const detail::FluidMachine machine{slots, beta, bytes_per_us_hbm, cp.bw_knee, p.compute_overlap_n};
  double stage1 = detail::run_fluid(machine, s.jobs, tasks, {}, 0.0, s.times, s.fluid);
  // A folded plan's L2 hits follow where its head groups run: read them off this timeline (the window is the time
  // the device takes to stream fold_l2_window L2 sizes), then play stage 1 again with the reads they save.
  if (sibling_timeline && stage1 > 0) {
    double streamed = 0;
    for (const FluidJob& j : s.jobs) streamed += j.bytes;
    if (streamed > 0) {
      const double window_us = p.fold_l2_window * gpu.l2_mib * double(1 << 20) / (streamed / stage1);
      detail::sibling_l2_shares(plan, batch.size(), s.times, window_us, s.sibling, s.sibling_share);
      build_stage1_jobs(plan, batch, gpu, p, cls, cp, s.sibling_share, s, m);
      s.times.assign(static_cast<size_t>(W), {});
      stage1 = detail::run_fluid(machine, s.jobs, tasks, {}, 0.0, s.times, s.fluid);
    }
  }

  // Timeline row of each work: persistent plans have one row per cluster (a cluster waiting for a free place
  // keeps its own row); a grid's lane s = (round j, place c) is row c * per_cu + j, so the first `cus`
  // workgroups spread over distinct places.
  const int rows = grid ? slots : lists;
  s.work_row.resize(static_cast<size_t>(W));
  for (int i = 0, c = 0; i < W; ++i) {
    if (grid) {
      const int lane = s.times[i].lane;
      s.work_row[i] = (lane % cus) * per_cu + lane / cus;
    } else {
      while (plan.work_indptr[c + 1] <= i) ++c;
      s.work_row[i] = c;
    }
  }
  double busy = 0;
  s.previous_work.resize(static_cast<size_t>(W));
  s.work_us.resize(static_cast<size_t>(W));
  s.slot_last.assign(static_cast<size_t>(std::max(rows, 0)), -1);
  s.cu_used.assign(static_cast<size_t>(std::max(cus, 0)), 0);
  for (int i = 0; i < W; ++i) {
    const FluidJobTimes& t = s.times[i];
    s.work_us[i] = t.end_us - t.begin_us;
    busy += s.work_us[i];
    s.previous_work[i] = s.slot_last[s.work_row[i]];
    s.slot_last[s.work_row[i]] = i;
    if (grid) s.cu_used[t.lane % cus] = 1;
  }

  // Stage 2.
  build_tile_facts(plan, batch, s);
  const int T = static_cast<int>(s.tiles.size());
  s.tile_us.assign(static_cast<size_t>(T), 0.0);
  double end = stage1;
  const bool reduce_runs = plan.num_partials() > 0;
  if (reduce_runs) {
    const int heads = grid ? (plan.num_heads > 0 ? plan.num_heads : batch.q_heads) : heads_per_row(plan, batch);
    detail::build_reduce_stage(cls.reduce, s.tiles, heads, gpu.num_cu, batch.max_qo_len(), p, s.reduce);
    end = run_reduce_kernel(s.reduce, s.reduce_times, stage1 + p.stage_gap_us + p.second_kernel_us, gpu, p, s, m);
    for (size_t k = 0; k < s.reduce.items.size(); ++k) {
      double& d = s.tile_us[s.reduce.items[k].tile];
      d = std::max(d, s.reduce_times[k].end_us - s.reduce_times[k].begin_us);
    }
  } else {
    end = stage1 + p.stage_gap_us;
  }
  // The LSE merge of a merged two-scope run: the class's reduce kernel on the merge tiles, launched after the
  // reduce (one more kernel boundary), reading each stream's fp32 output and LSE and writing the token's output.
  build_merge_tiles(batch, s);
  const bool merge_runs = !s.merge_tiles.empty();
  double merge_longest = 0;
  if (merge_runs) {
    detail::build_reduce_stage(cls.reduce, s.merge_tiles, batch.q_heads, gpu.num_cu, 1, p, s.merge);
    end = run_reduce_kernel(s.merge, s.merge_times, (reduce_runs ? end + p.stage_gap_us : end) + p.second_kernel_us,
                            gpu, p, s, m);
    for (const FluidJobTimes& t : s.merge_times) merge_longest = std::max(merge_longest, t.end_us - t.begin_us);
  }

  m.kernel_class = cls.name;
  m.stage1_us = stage1;
  m.reduce_us = end - stage1;
  m.kernel_us = end;
  m.total_us = m.kernel_us + p.launch_us + (reduce_runs ? p.reduce_launch_us : 0.0) +
               (merge_runs ? p.reduce_launch_us : 0.0) + (grid ? 0.0 : p.planner_us);
  m.active_clusters =
      grid ? static_cast<int>(std::count(s.cu_used.begin(), s.cu_used.end(), 1)) : plan.active_clusters();
  m.occupancy = stage1 > 0 && slots > 0 ? busy / (double(slots) * stage1) : 0.0;
  m.splits_per_request.assign(static_cast<size_t>(batch.size()), 0);
  for (int i = 0; i < W; ++i) {  // a final work is one fragment; a partial one is one of its tile's n
    const int t = s.work_tile[i];
    int& splits = m.splits_per_request[std::clamp(plan.request_of(plan.works[i]), 0, batch.size() - 1)];
    splits = std::max(splits, t >= 0 ? s.tiles[t].partials : 1);
  }
  m.num_works = W;
  m.num_partials = plan.num_partials();
  m.achieved_tbps = m.kernel_us > 0 ? m.kv_bytes / m.kernel_us / 1e6 : 0.0;
  m.critical_path_us =
      reduce_critical_path({s.work_us, s.previous_work, s.work_tile, s.tile_us}).length_us + merge_longest;

  if (timeline) {
    Timeline& tl = *timeline;
    tl.num_clusters = rows;
    tl.rows_per_cu = per_cu;
    tl.rows.assign(static_cast<size_t>(rows), {});
    tl.stage1_us = m.stage1_us;
    tl.reduce_us = m.reduce_us;
    // Size each row once: count its boxes first (s.slot_last is free again).
    std::vector<int>& per_row = s.slot_last;
    per_row.assign(static_cast<size_t>(rows), 0);
    for (int i = 0; i < W; ++i) ++per_row[s.work_row[i]];
    for (int r = 0; r < rows; ++r) tl.rows[r].reserve(static_cast<size_t>(per_row[r]));
    for (int i = 0; i < W; ++i) {
      const WorkInfo& w = plan.works[i];
      const FluidJobTimes& t = s.times[i];
      tl.rows[s.work_row[i]].push_back(
          {t.begin_us, t.stream_us, t.end_us, i, plan.request_of(w), w.kv_start, w.kv_end, w.is_partial()});
    }
    tl.reduce.clear();
    // Only stages that ran this time: the scratch keeps an earlier run's items.
    if (reduce_runs) add_reduce_boxes(tl, s.reduce, s.tiles, s.reduce_times, gpu.num_cu, false);
    if (merge_runs) add_reduce_boxes(tl, s.merge, s.merge_tiles, s.merge_times, gpu.num_cu, true);
  }
  return m;
}

// run() over the batch the plan's works index: a sparse batch becomes its per-token batch (dense batches are used
// as they are, without a copy).
Metrics run_plan(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                 std::optional<KernelClassId> kernel, Timeline* timeline) {
  if (!batch.is_sparse() && plan.gathered == GatheredRows::none) return run(plan, batch, gpu, params, kernel, timeline);
  return run(plan, kernel_batch(plan, batch), gpu, params, kernel, timeline);
}

}  // namespace

Prediction simulate(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                    std::optional<KernelClassId> kernel) {
  Prediction p;
  p.metrics = run_plan(plan, batch, gpu, params, kernel, &p.timeline);
  return p;
}

Metrics simulate_metrics(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                         std::optional<KernelClassId> kernel) {
  return run_plan(plan, batch, gpu, params, kernel, nullptr);
}

}  // namespace mlasim::sim
