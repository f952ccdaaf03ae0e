// flashmla against split-policies.md section 4.1/4.2 and worked example 5 P5 (transplanted to 256 parts).
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::pieces_per_request;
using testing::plan;
using testing::plan_keeps_contract;
using testing::uniform;

int works_on(const Plan& p, int cluster) { return p.work_end(cluster) - p.work_begin(cluster); }

TEST(FlashMla, WorkedExampleP5A) {
  const DecodeBatch batch = uniform(4, 100000);
  const Plan p = plan("flashmla", batch);
  EXPECT_EQ(p.kernel, KernelKind::persistent);
  EXPECT_EQ(p.num_work_lists(), 256);
  EXPECT_EQ(p.model.sum_blocks, 6272);
  EXPECT_EQ(p.model.payload_blocks, 30);
  EXPECT_EQ(pieces_per_request(p), (std::vector<int>{63, 64, 63, 63}));
  EXPECT_EQ(p.num_works(), 253);
  EXPECT_EQ(p.active_clusters(), 251);
  std::vector<int> with_two;
  for (int c = 0; c < 256; ++c)
    if (works_on(p, c) == 2) with_two.push_back(c);
  EXPECT_EQ(with_two, (std::vector<int>{62, 125}));
  int64_t largest = 0;
  for (const WorkInfo& w : p.works) largest = std::max<int64_t>(largest, w.kv_pages());
  EXPECT_EQ(largest, 1600);
  // Part 62 closes request 0 with 13 blocks and takes 7 of request 1; part 187 closes request 2 with 24.
  EXPECT_EQ(p.works[p.work_begin(62)].kv_pages(), 13 * 64 - 32);  // the last block holds 100000 - 1562 x 64 = 32
  EXPECT_EQ(p.works[p.work_begin(62) + 1].kv_pages(), 7 * 64);
  EXPECT_EQ(p.works[p.work_begin(187)].kv_pages(), 24 * 64 - 32);
  EXPECT_EQ(works_on(p, 251), 0);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashMla, WorkedExampleP5B) {
  const Plan p = plan("flashmla", uniform(1, 8192));
  EXPECT_EQ(p.model.payload_blocks, 6);
  EXPECT_EQ(p.num_works(), 128);
  EXPECT_EQ(p.active_clusters(), 128);
  EXPECT_EQ(testing::work_tokens(p), std::vector<int64_t>(128, 64));
}

TEST(FlashMla, WholeRequestsOnOnePartWriteTheOutput) {
  const Plan p = plan("flashmla", uniform(256, 1000));
  EXPECT_EQ(p.num_partials(), 0);
  EXPECT_EQ(p.works[0].partial_qo_loc, -1);
  EXPECT_EQ(p.reduce_final_map[0][0], kUnwritten);
}

TEST(FlashMla, PartsKnobSetsTheFill) {
  // 132 parts (an H800's SMs at 16 heads): total 6272, payload cdiv(6272, 132) + 5 = 53.
  const Plan p = plan("flashmla:parts=132", uniform(4, 100000));
  EXPECT_EQ(p.num_work_lists(), 132);
  EXPECT_EQ(p.model.payload_blocks, 53);
}

TEST(FlashMla, Heads128UseTwoQBlocksPerPart) {
  const DecodeBatch batch = uniform(2, 5000, 128);
  const Plan p = plan("flashmla", batch);
  EXPECT_EQ(p.num_work_lists(), 256);  // 128 parts x 2 q blocks
  EXPECT_EQ(p.derived.num_splits, 128);
  EXPECT_EQ(p.derived.qk_batch_ratio, 2);
  EXPECT_EQ(p.works[p.work_begin(0)].batch_idx, 0);
  EXPECT_EQ(p.works[p.work_begin(1)].batch_idx, 1);
  EXPECT_EQ(p.works[p.work_begin(1)].kv_start, p.works[p.work_begin(0)].kv_start);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashMla, QueryTokensShareA64RowBlock) {
  // 16 heads x 8 tokens = 128 rows: two q blocks of 4 tokens.
  const DecodeBatch batch = uniform(3, 3000, 16, 8);
  const Plan p = plan("flashmla", batch);
  EXPECT_EQ(p.num_work_lists(), 256);
  EXPECT_EQ(p.works[0].qo_end - p.works[0].qo_start, 4);
  EXPECT_EQ(p.rows_per_partial, 4);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashMla, PagedKvCutsAt64TokenBlocks) {
  DecodeBatch batch = uniform(1, 8000);
  batch.page_size = 16;
  const Plan p = plan("flashmla", batch);
  EXPECT_EQ(p.works[0].kv_pages(), 4);  // one 64-token block = 4 pages
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashMla, SchedulersDifferInTheirLimits) {
  const auto field = [](const std::string& spec, const DecodeBatch& b, int clusters = 0) {
    const auto e = input_error_of([&] { plan(spec, b, clusters); });
    return e ? e->field() : std::string("no error");
  };
  EXPECT_EQ(field("flashmla", uniform(4096, 10)), "batch");
  EXPECT_EQ(field("flashmla:scheduler=2026", uniform(4096, 10)), "no error");
  EXPECT_EQ(field("flashmla", uniform(1, 100, 128), 1), "clusters");
  EXPECT_EQ(field("flashmla:scheduler=2026", uniform(1, 100, 128), 1), "no error");
}

TEST(FlashMla, RejectsBadKnobsAndWorkloads) {
  const auto message = [](const std::string& spec, const DecodeBatch& b) {
    const auto e = input_error_of([&] { plan(spec, b); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_EQ(message("flashmla:parts=0", uniform(1, 100)), "parts: must be auto or 1..4096, got 0");
  EXPECT_EQ(message("flashmla:parts=200", uniform(1, 100, 128)),
            "parts: must be 1..128 (256 clusters / 2 q blocks), got 200");
  EXPECT_EQ(message("flashmla:scheduler=2024", uniform(1, 100)), "scheduler: must be 2025 or 2026, got 2024");
  DecodeBatch ragged = uniform(2, 100);
  ragged.qo_lens = {1, 2};
  EXPECT_EQ(message("flashmla", ragged), "qo_len: flashmla takes one query length (s_q) for the whole batch");
  DecodeBatch big_pages = uniform(2, 1000);
  big_pages.page_size = 128;
  EXPECT_EQ(message("flashmla", big_pages),
            "page_size: flashmla walks 64-token KV blocks; page size must be 1..64, got 128");
  EXPECT_EQ(message("flashmla", uniform(2, 100, 48, 2)).substr(0, 6), "heads:");
}

}  // namespace
}  // namespace mlasim::sim
