// Sparse (top-k) decode plans: the per-token batch each convention gives, AITER's and FlashMLA's sparse plans
// against the worked tables of docs/reference/sparse-mla.md (§1.5 and §3.5), and the graph-safe buffers every
// plan of a batch up to the sizing limit fits.
#include <gtest/gtest.h>

#include <random>

#include "mlasim/model/gathered_rows.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/graph_buffers.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::gpu;
using testing::plan;
using testing::plan_keeps_contract;

DecodeBatch sparse(int batch, int context, int topk, int heads = 16, int qlen = 1) {
  DecodeBatch b = DecodeBatch::uniform(batch, context, qlen);
  b.q_heads = heads;
  b.topk = topk;
  return b;
}

// A sparse plan keeps every dense plan's contract over its per-token batch.
::testing::AssertionResult keeps_contract_over_tokens(const Plan& p, const DecodeBatch& sparse_batch,
                                                      bool exact_buffers = true) {
  Plan over_tokens = p;
  over_tokens.gathered = GatheredRows::none;
  return plan_keeps_contract(over_tokens, kernel_batch(p, sparse_batch), exact_buffers);
}

TEST(GatheredRows, SelectedRowsAreEachTokensCausalContextClampedToItsTopk) {
  DecodeBatch b = sparse(3, 100, 64, 16, 2);
  b.kv_lens = {100, 10, 64};
  b.topk_lens = {64, 64, 32};
  const DecodeBatch g = gathered_batch(b, GatheredRows::selected);
  EXPECT_EQ(g.kv_lens, (std::vector<int>{64, 64, 9, 10, 32, 32}));
  EXPECT_EQ(g.qo_lens, std::vector<int>(6, 1));
  EXPECT_FALSE(g.is_sparse());
  EXPECT_EQ(g.page_size, 1);
  // FlashMLA walks the request's whole top-k whatever the context: short rows are masked sentinels.
  EXPECT_EQ(gathered_batch(b, GatheredRows::full_topk).kv_lens, (std::vector<int>{64, 64, 64, 64, 32, 32}));
}

TEST(GatheredRows, ASparseBatchIsValidatedNamingTheField) {
  DecodeBatch b = sparse(2, 100, 64);
  b.topk_lens = {64};
  EXPECT_THROW(b.validate(), InputError);
  b.topk_lens = {65, 1};
  const auto topk_error = input_error_of([&] { b.validate(); });
  ASSERT_TRUE(topk_error);
  EXPECT_EQ(topk_error->field(), "topk_lens");
  b.topk_lens.clear();
  b.page_size = 16;
  const auto page_error = input_error_of([&] { b.validate(); });
  ASSERT_TRUE(page_error);
  EXPECT_EQ(page_error->field(), "page_size");
}

TEST(SparsePlans, AiterV1PlansTheTokensSelectedRowsAsADensePlan) {
  const DecodeBatch b = sparse(4, 100000, 2048);
  const Plan p = plan("aiter-v1", b);
  EXPECT_EQ(p.gathered, GatheredRows::selected);
  const Plan dense = plan("aiter-v1", DecodeBatch::uniform(4, 2048));
  EXPECT_EQ(p.works, dense.works);
  EXPECT_EQ(p.reduce_partial_map, dense.reduce_partial_map);
  EXPECT_TRUE(keeps_contract_over_tokens(p, b, false));
  EXPECT_TRUE(check_plan(p, b).empty());
}

// sparse-mla.md §1.5: MI355X, 16 heads fp8, top-k 2048, contexts >= 2048: works (= busy CUs) and partials.
TEST(SparsePlans, AiterV1MatchesTheWorkedSparseTable) {
  struct Row {
    int tokens;
    int msb;
    int works, partials;
  };
  for (const Row& r :
       {Row{1, -1, 128, 128}, Row{1, 16, 15, 15}, Row{4, -1, 172, 172}, Row{4, 16, 60, 60}, Row{16, -1, 240, 240},
        Row{32, -1, 256, 256}, Row{128, -1, 256, 256}, Row{256, -1, 256, 0}, Row{512, -1, 512, 0}}) {
    const Plan p = plan("aiter-v1:max_split_per_batch=" + std::to_string(r.msb), sparse(r.tokens, 4096, 2048));
    EXPECT_EQ(p.num_works(), r.works) << r.tokens << " tokens, msb " << r.msb;
    EXPECT_EQ(p.num_partials(), r.partials) << r.tokens << " tokens, msb " << r.msb;
  }
  // The sparse backends pass no split cap: the derived default is -1 even at 128 heads.
  EXPECT_EQ(plan("aiter-v1", sparse(4, 4096, 2048, 128)).derived.num_splits, 256);
}

// sparse-mla.md §3.5: H100 (132 SMs), s_q 1, top-k 2048 (32 blocks per request), FlashMLA's newest scheduler.
TEST(SparsePlans, FlashMlaMatchesTheWorkedSparseSchedules) {
  struct Row {
    int batch, heads;
    int parts, payload, splits, busy_parts;
  };
  for (const Row& r : {Row{1, 128, 66, 6, 32, 32}, Row{4, 128, 66, 8, 11, 44}, Row{16, 128, 66, 14, 4, 64},
                       Row{128, 128, 66, 77, 1, 64}, Row{1, 64, 132, 6, 32, 32}, Row{4, 64, 132, 7, 16, 64},
                       Row{64, 64, 132, 23, 2, 128}}) {
    const DecodeBatch b = sparse(r.batch, 1000, 2048, r.heads);  // contexts shorter than the top-k: still 2048
    const Plan p = plan("flashmla:scheduler=2026", b, "h100");
    const int m_blocks = r.heads / 64;
    EXPECT_EQ(p.gathered, GatheredRows::full_topk);
    EXPECT_EQ(p.derived.num_splits, r.parts) << r.batch << " x " << r.heads;
    EXPECT_EQ(p.model.payload_blocks, r.payload) << r.batch << " x " << r.heads;
    EXPECT_EQ(p.active_clusters(), r.busy_parts * m_blocks) << r.batch << " x " << r.heads;
    EXPECT_EQ(p.num_works(), r.batch * r.splits * m_blocks) << r.batch << " x " << r.heads;
    EXPECT_TRUE(keeps_contract_over_tokens(p, b));
  }
}

TEST(SparsePlans, FlashMlaReplicatesTheRequestScheduleOverItsQueryTokens) {
  const DecodeBatch b = sparse(4, 5000, 2048, 64, 2);
  const Plan p = plan("flashmla:scheduler=2026", b, "h100");
  EXPECT_EQ(p.derived.num_splits, 66);  // max(132 / s_q / q blocks, 1)
  // The sparse release of 2025: max((SMs / 2) / (cdiv(heads, 128) x s_q), 1).
  EXPECT_EQ(plan("flashmla", b, "h100").derived.num_splits, 33);
  EXPECT_EQ(p.num_requests, 8);
  EXPECT_TRUE(keeps_contract_over_tokens(p, b));
}

TEST(SparsePlans, PoliciesWithoutASparsePathSayWhichHaveOne) {
  const auto e = input_error_of([&] { plan("flashinfer-mla", sparse(4, 4096, 2048)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "topk");
  EXPECT_NE(std::string(e->what()).find("aiter-v1"), std::string::npos) << e->what();
}

TEST(SparsePlans, EverySparseCapablePolicySimulates) {
  WorkloadContext ctx = resolve(Workload{});
  ctx.batch = sparse(64, 100000, 2048);
  for (const char* spec : {"aiter-v1", "aiter-v1-adaptive", "aiter-nonpersistent", "fixed:splits=4", "flashmla"}) {
    const Evaluation e = evaluate(spec, ctx);
    EXPECT_GT(e.prediction->metrics.kernel_us, 0) << spec;
    EXPECT_TRUE(check_plan(*e.plan, ctx.batch).empty()) << spec;
  }
  // Reading 2048 rows instead of 100000 per request is the point of sparse decode.
  WorkloadContext dense = ctx;
  dense.batch.topk = 0;
  EXPECT_LT(evaluate("aiter-v1", ctx).prediction->metrics.kernel_us,
            evaluate("aiter-v1", dense).prediction->metrics.kernel_us / 10);
}

TEST(SparsePlans, ADensePlanDoesNotRunASparseBatch) {
  const Plan p = plan("aiter-v1", DecodeBatch::uniform(4, 2048));
  EXPECT_THROW(kernel_batch(p, sparse(4, 2048, 2048)), InputError);
  EXPECT_FALSE(check_plan(p, sparse(4, 2048, 2048)).empty());
}

// Rows gathered one by one (page size 1) cost gather_extra_read more per byte; pages read in runs do not.
TEST(GatherCost, OnlyPageSizeOneReadsPayTheGatherTerm) {
  const Gpu& g = gpu("h100");
  CostParams p = cost_params_for(g);
  p.gather_extra_read = 0;
  CostParams slow = p;
  slow.gather_extra_read = 0.5;
  const auto kernel_us = [&](const DecodeBatch& b, const CostParams& params) {
    const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
    return simulate_metrics(plan, b, g, params).kernel_us;
  };
  const DecodeBatch gathered = sparse(128, 100000, 2048);
  EXPECT_GT(kernel_us(gathered, slow), kernel_us(gathered, p) * 1.2);
  DecodeBatch paged = DecodeBatch::uniform(128, 4096);
  paged.page_size = 64;
  paged.kv_granularity = 64;
  EXPECT_DOUBLE_EQ(kernel_us(paged, slow), kernel_us(paged, p));
}

// The graph-capture property: buffers sized once for a largest batch hold the plan of every batch up to it.
TEST(GraphBuffers, EveryBatchUpToTheLimitFitsAiterV1sBuffers) {
  std::mt19937 rng(7);
  for (const int heads : {16, 128})
    for (const int topk : {0, 2048})
      for (const char* spec : {"aiter-v1", "aiter-v1:max_split_per_batch=16", "aiter-v1:max_split_per_batch=1"}) {
        const int max_batch = 64;
        DecodeBatch largest = topk ? sparse(max_batch, 1, topk, heads) : DecodeBatch::uniform(max_batch, 1);
        largest.q_heads = heads;
        const auto policy = make_policy(spec);
        const auto buffers = policy->graph_buffers({largest, gpu("mi355x"), 0});
        ASSERT_TRUE(buffers);
        for (int trial = 0; trial < 40; ++trial) {
          const int n = std::uniform_int_distribution<int>(1, max_batch)(rng);
          DecodeBatch b = largest;
          b.kv_lens.clear();
          for (int i = 0; i < n; ++i) b.kv_lens.push_back(std::uniform_int_distribution<int>(1, 200000)(rng));
          b.qo_lens.assign(static_cast<size_t>(n), 1);
          if (topk && trial % 2)
            for (int i = 0; i < n; ++i) b.topk_lens.push_back(std::uniform_int_distribution<int>(1, topk)(rng));
          const Plan p = policy->plan({b, gpu("mi355x"), 0});
          EXPECT_NO_THROW(check_plan_fits(p, *buffers))
              << spec << ", " << heads << " heads, topk " << topk << ", " << n << " requests";
        }
      }
}

TEST(GraphBuffers, ABatchPastTheLimitIsRefusedNamingTheBuffer) {
  const DecodeBatch largest = sparse(8, 1, 2048);
  const auto policy = make_policy("aiter-v1");
  const auto buffers = policy->graph_buffers({largest, gpu("mi355x"), 0});
  const Plan p = policy->plan({sparse(300, 4096, 2048), gpu("mi355x"), 0});
  const auto e = input_error_of([&] { check_plan_fits(p, *buffers); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "work_info_set") << e->what();
}

// sparse-mla.md §1.4's example: MI355X, 8192 tokens, 16 heads.
TEST(GraphBuffers, AiterV1SparseSizesMatchGetMlaMetadataInfoV1) {
  const auto buffers = make_policy("aiter-v1")->graph_buffers({sparse(8192, 1, 2048), gpu("mi355x"), 0});
  ASSERT_TRUE(buffers);
  std::map<std::string, std::vector<int64_t>> shape;
  for (const GraphBuffer& b : buffers->buffers) shape[b.name] = b.shape;
  EXPECT_EQ(shape["work_indptr"], (std::vector<int64_t>{257}));
  EXPECT_EQ(shape["work_info_set"], (std::vector<int64_t>{8447, 8}));
  EXPECT_EQ(shape["reduce_indptr"], (std::vector<int64_t>{8193}));
  EXPECT_EQ(shape["reduce_final_map"], (std::vector<int64_t>{8192, 2}));
  EXPECT_EQ(shape["reduce_partial_map"], (std::vector<int64_t>{510}));
  EXPECT_EQ(shape["logits"], (std::vector<int64_t>{510, 1, 16, 512}));
  EXPECT_EQ(shape["kv_indices"], (std::vector<int64_t>{8192 * 2048}));
}

}  // namespace
}  // namespace mlasim::sim
