// Contracts of every simulated timeline, for every registered policy on a spread of batches and GPUs: no overlap
// on a row, every work exactly once, every reduce item after the works that feed its tile.
#include <gtest/gtest.h>

#include <random>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/kernel_choice.h"
#include "mlasim/sim/reduce_launch.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {
namespace {

constexpr double kEps = 1e-9;

struct TimelineCase {
  std::string name;
  DecodeBatch batch;
};

std::vector<TimelineCase> timeline_cases() {
  std::vector<TimelineCase> out;
  out.push_back({"1x1000", DecodeBatch::uniform(1, 1000)});
  out.push_back({"4x100000", DecodeBatch::uniform(4, 100000)});
  out.push_back({"64x8000", DecodeBatch::uniform(64, 8000)});
  out.push_back({"300x2000", DecodeBatch::uniform(300, 2000)});
  std::mt19937 rng(11);
  DecodeBatch mixed;
  for (int i = 0; i < 20; ++i) {
    mixed.kv_lens.push_back(rng() % 4 == 0 ? 50000 + static_cast<int>(rng() % 80000)
                                           : 100 + static_cast<int>(rng() % 6000));
    mixed.qo_lens.push_back(1);
  }
  out.push_back({"mixed20", mixed});
  DecodeBatch mtp = DecodeBatch::uniform(8, 20000, 2);
  out.push_back({"mtp2", mtp});
  DecodeBatch wide = DecodeBatch::uniform(3, 30000);
  wide.q_heads = 128;
  out.push_back({"128heads", wide});
  DecodeBatch folded = wide;
  folded.q_dtype = folded.kv_dtype = DType::bf16;
  out.push_back({"128heads-bf16", folded});
  DecodeBatch paged = DecodeBatch::uniform(5, 20001);
  paged.page_size = 16;
  paged.kv_granularity = 16;
  out.push_back({"page16", paged});
  return out;
}

void check_timeline(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const Prediction& pr) {
  const Timeline& tl = pr.timeline;
  ASSERT_EQ(static_cast<int>(tl.rows.size()), tl.num_clusters);
  std::vector<int> seen(plan.works.size(), 0);
  double last_end = 0;
  for (const auto& row : tl.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      const TimelineBox& b = row[i];
      EXPECT_LE(b.begin_us, b.stream_us);
      EXPECT_LE(b.stream_us, b.end_us);
      if (i > 0) {
        EXPECT_LE(row[i - 1].end_us, b.begin_us + kEps);
      }
      ASSERT_GE(b.work, 0);
      ASSERT_LT(b.work, plan.num_works());
      ++seen[b.work];
      last_end = std::max(last_end, b.end_us);
    }
  }
  for (size_t w = 0; w < seen.size(); ++w) EXPECT_EQ(seen[w], 1) << "work " << w;
  EXPECT_DOUBLE_EQ(tl.stage1_us, last_end);
  EXPECT_DOUBLE_EQ(pr.metrics.stage1_us, last_end);

  // End of the works writing each partial row.
  std::vector<double> work_end(plan.works.size(), 0);
  for (const auto& row : tl.rows)
    for (const TimelineBox& b : row) work_end[b.work] = b.end_us;
  std::vector<double> partial_end;
  for (size_t w = 0; w < plan.works.size(); ++w) {
    const int loc = plan.works[w].partial_qo_loc;
    if (loc < 0) continue;
    if (static_cast<int>(partial_end.size()) <= loc) partial_end.resize(static_cast<size_t>(loc) + 1, 0);
    partial_end[loc] = work_end[w];
  }
  int previous_block = -1;
  double block_end = 0;
  for (const ReduceBox& r : tl.reduce) {
    EXPECT_GE(r.begin_us, tl.stage1_us - kEps);
    EXPECT_LE(r.begin_us, r.end_us);
    EXPECT_LE(r.end_us, tl.end_us() + kEps);
    for (int k = plan.reduce_indptr[r.tile]; k < plan.reduce_indptr[r.tile + 1]; ++k)
      EXPECT_GE(r.begin_us, partial_end.at(plan.reduce_partial_map[k]) - kEps);
    EXPECT_EQ(r.partials, plan.reduce_indptr[r.tile + 1] - plan.reduce_indptr[r.tile]);
    if (r.block == previous_block) {
      EXPECT_LE(block_end, r.begin_us + kEps);  // one block's items run in turn
    }
    previous_block = r.block;
    block_end = r.end_us;
  }
  EXPECT_EQ(tl.reduce.empty(), plan.num_partials() == 0);
  // Every (tile, head, row group) that has something to merge is merged exactly once.
  const int tiles = static_cast<int>(plan.reduce_indptr.size()) - 1;
  const bool grid = plan.kernel == KernelKind::grid;
  const int heads = grid ? plan.num_heads : plan.derived.num_heads_eff;
  // The reduce that follows is the kernel class's: Triton's after AITER's grid kernel, mla_reduce_v1 otherwise.
  const bool triton = kernel_class(auto_kernel_class(plan, batch, gpu)).reduce == ReduceKind::triton;
  const ReduceLaunch launch = aiter_reduce_launch(tiles, heads, gpu.num_cu, batch.max_qo_len());
  std::vector<int> merged(static_cast<size_t>(tiles), 0);
  for (const ReduceBox& r : tl.reduce) merged[r.tile] += r.heads;
  for (int t = 0; t < tiles; ++t) {
    const int n = plan.reduce_indptr[t + 1] - plan.reduce_indptr[t];
    const int rows = plan.reduce_final_map[t][1] - plan.reduce_final_map[t][0];
    const int groups = triton ? 1 : std::min(launch.row_groups, rows);
    EXPECT_EQ(merged[t], n >= (triton ? 1 : 2) ? heads * groups : 0) << "tile " << t;
  }
  EXPECT_EQ(pr.metrics.splits_per_request, plan.splits_per_request());
  EXPECT_DOUBLE_EQ(pr.metrics.kernel_us, tl.end_us());
  EXPECT_LE(pr.metrics.critical_path_us, pr.metrics.kernel_us + kEps);
  EXPECT_GT(pr.metrics.occupancy, 0);
  EXPECT_LE(pr.metrics.occupancy, 1 + kEps);
}

TEST(TimelineConsistency, EveryPolicyOnEveryCase) {
  int simulated = 0;
  for (const std::string gpu_name : {"mi355x", "mi300x", "h100"}) {
    const Gpu gpu = load_gpu(gpu_name);
    const CostParams params = cost_params_for(gpu);
    for (const TimelineCase& c : timeline_cases()) {
      for (const PolicyInfo& info : policy_registry()) {
        Plan plan;
        try {
          plan = make_policy(info.name)->plan(PlanRequest{c.batch, gpu, 0});
        } catch (const InputError&) {
          continue;  // a head count or arch the policy does not support
        }
        SCOPED_TRACE(info.name + " on " + c.name + " / " + gpu_name);
        check_timeline(plan, c.batch, gpu, simulate(plan, c.batch, gpu, params));
        ++simulated;
      }
    }
  }
  EXPECT_GT(simulated, 40);
}

}  // namespace
}  // namespace mlasim::sim
