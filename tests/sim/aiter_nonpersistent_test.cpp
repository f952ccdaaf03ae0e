// aiter-nonpersistent against split-policies.md section 1 (split count table, 1.4 round robin, 5 P1) and section 2.
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::mi355x;
using testing::plan;
using testing::plan_keeps_contract;
using testing::work_tokens;

DecodeBatch typed_batch(int batch, int context, DType dtype = DType::bf16, int heads = 16, int qlen = 1) {
  DecodeBatch b = DecodeBatch::uniform(batch, context, qlen);
  b.q_heads = heads;
  b.q_dtype = b.kv_dtype = dtype;
  return b;
}

int splits(const std::string& spec, int batch, int context, DType dtype) {
  return plan(spec, typed_batch(batch, context, dtype)).derived.num_splits;
}

// Section 1.2's table: S for uniform context, 256 CUs, 16 heads, qlen 1 (bf16 columns, then fp8 q).
struct SplitRow {
  int batch;
  std::vector<int> bf16;  // at 128, 512, 1024, 4096, 8192, 32768, 100000 tokens
  std::vector<int> fp8;   // at 128, 512, 1024, 4096 tokens
};

TEST(AiterNonpersistent, SplitCountTableOfSection12) {
  const std::vector<int> bf16_ctx = {128, 512, 1024, 4096, 8192, 32768, 100000};
  const std::vector<int> fp8_ctx = {128, 512, 1024, 4096};
  const std::vector<SplitRow> rows = {
      {1, {16, 16, 16, 16, 16, 16, 16}, {1, 4, 8, 16}},  {16, {16, 16, 16, 16, 16, 16, 16}, {1, 4, 8, 16}},
      {24, {10, 10, 10, 10, 10, 10, 10}, {1, 4, 8, 10}}, {32, {8, 8, 8, 8, 8, 8, 8}, {1, 4, 8, 8}},
      {48, {5, 5, 5, 5, 5, 16, 16}, {1, 4, 5, 5}},       {64, {4, 4, 4, 4, 4, 4, 4}, {1, 4, 4, 4}},
      {96, {2, 2, 5, 8, 8, 8, 8}, {1, 2, 5, 8}},         {128, {2, 2, 2, 2, 2, 2, 2}, {1, 2, 2, 2}},
      {192, {1, 1, 4, 4, 4, 4, 4}, {1, 1, 4, 4}},        {256, {1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1}},
  };
  for (const auto& row : rows) {
    for (size_t i = 0; i < bf16_ctx.size(); ++i)
      EXPECT_EQ(splits("aiter-nonpersistent", row.batch, bf16_ctx[i], DType::bf16), row.bf16[i])
          << "bf16 batch " << row.batch << " context " << bf16_ctx[i];
    for (size_t i = 0; i < fp8_ctx.size(); ++i)
      EXPECT_EQ(splits("aiter-nonpersistent", row.batch, fp8_ctx[i], DType::fp8), row.fp8[i])
          << "fp8 batch " << row.batch << " context " << fp8_ctx[i];
  }
}

TEST(AiterNonpersistent, WorkedExampleP1AInBf16) {
  const Plan p = plan("aiter-nonpersistent", typed_batch(4, 100000));
  EXPECT_EQ(p.kernel, KernelKind::grid);
  EXPECT_EQ(p.derived.num_splits, 16);
  EXPECT_EQ(p.num_works(), 64);
  EXPECT_EQ(p.num_work_lists(), 64);
  // Launch order: request fastest, then split. Splits 0-9 own 98 blocks of 64, split 10 97 blocks and the
  // 32-token tail, splits 11-15 97 blocks.
  std::vector<int64_t> expect;
  for (int s = 0; s < 16; ++s)
    for (int b = 0; b < 4; ++b) expect.push_back(s < 10 ? 6272 : s == 10 ? 6240 : 6208);
  EXPECT_EQ(work_tokens(p), expect);
  EXPECT_EQ(p.works[1].batch_idx, 1);
  EXPECT_EQ(p.works[4].batch_idx, 0);
  EXPECT_EQ(p.works[4].kv_start, 6272);
  EXPECT_EQ(p.num_partials(), 64);
  EXPECT_EQ(p.num_tiles(), 4);
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 16, 32, 48, 64}));
  EXPECT_TRUE(plan_keeps_contract(p, typed_batch(4, 100000)));
}

TEST(AiterNonpersistent, WorkedExampleP1AInFp8) {
  const Plan p = plan("aiter-nonpersistent", typed_batch(4, 100000, DType::fp8));
  EXPECT_EQ(p.derived.num_splits, 16);
  std::vector<int64_t> expect;
  for (int s = 0; s < 16; ++s)
    for (int b = 0; b < 4; ++b) expect.push_back(s < 13 ? 6272 : s == 13 ? 6176 : 6144);
  EXPECT_EQ(work_tokens(p), expect);
}

TEST(AiterNonpersistent, WorkedExampleP1B) {
  const Plan bf16 = plan("aiter-nonpersistent", typed_batch(1, 8192));
  EXPECT_EQ(work_tokens(bf16), std::vector<int64_t>(16, 512));
  const Plan fp8 = plan("aiter-nonpersistent", typed_batch(1, 8192, DType::fp8));
  EXPECT_EQ(work_tokens(fp8), std::vector<int64_t>(16, 512));
}

TEST(AiterNonpersistent, ShortRequestKeepsOnlySplitsThatOwnBlocks) {
  // 200 tokens, S = 4, K = 64: blocks 0..3 to splits 0..3; the last block holds 8 tokens.
  const Plan p = plan("aiter-nonpersistent:num_kv_splits=4", typed_batch(1, 200));
  EXPECT_EQ(work_tokens(p), (std::vector<int64_t>{64, 64, 64, 8}));
  // 100 tokens and S = 16: two blocks, so two workgroups; the rest exit without writing.
  const Plan q = plan("aiter-nonpersistent:num_kv_splits=16", typed_batch(1, 100));
  EXPECT_EQ(work_tokens(q), (std::vector<int64_t>{64, 36}));
  EXPECT_EQ(q.reduce_indptr, (std::vector<int32_t>{0, 2}));
}

TEST(AiterNonpersistent, RoundRobinTokenCountsWhenBlocksDoNotDivide) {
  // 10 blocks of 64 (the last with 40 tokens) over 4 splits: splits 0, 1 own 3 blocks, 2, 3 own 2;
  // the short block 9 belongs to split 9 mod 4 = 1.
  const Plan p = plan("aiter-nonpersistent:num_kv_splits=4", typed_batch(1, 616));
  EXPECT_EQ(work_tokens(p), (std::vector<int64_t>{192, 168, 128, 128}));
}

TEST(AiterNonpersistent, BlockKnobSetsTheRoundRobinBlock) {
  // 5 blocks of 128 (the last with 104 tokens): split 0 owns blocks 0 and 4.
  const Plan p = plan("aiter-nonpersistent:num_kv_splits=4,block=128", typed_batch(1, 616));
  EXPECT_EQ(work_tokens(p), (std::vector<int64_t>{232, 128, 128, 128}));
}

TEST(AiterNonpersistent, OneSplitRequestsWriteTheOutput) {
  const Plan bf16 = plan("aiter-nonpersistent", typed_batch(300, 64));
  EXPECT_EQ(bf16.derived.num_splits, 1);
  EXPECT_EQ(bf16.num_works(), 300);
  EXPECT_EQ(bf16.num_partials(), 0);
  const Plan fp8 = plan("aiter-nonpersistent", typed_batch(256, 128, DType::fp8));
  EXPECT_EQ(fp8.derived.num_splits, 1);
  EXPECT_EQ(fp8.works[0].partial_qo_loc, -1);
  EXPECT_EQ(fp8.reduce_final_map[0][0], kUnwritten);
}

TEST(AiterNonpersistent, GraphCapturedTotalKvFreezesTheSplitCount) {
  // Captured with 1-token dummy requests, fp8 cap 1 gives S = 1 for every later batch (section 6.4).
  const Plan p = plan("aiter-nonpersistent:graph_total_kv=4", typed_batch(4, 100000, DType::fp8));
  EXPECT_EQ(p.derived.num_splits, 1);
  EXPECT_EQ(work_tokens(p), std::vector<int64_t>(4, 100000));
}

TEST(AiterNonpersistent, CuNumChangesOnlyTheSplitRule) {
  EXPECT_EQ(plan("aiter-nonpersistent:cu_num=128", typed_batch(64, 4096)).derived.num_splits, 2);
  EXPECT_EQ(plan("aiter-nonpersistent", typed_batch(64, 4096), 128).derived.num_splits, 2);
}

TEST(AiterNonpersistent, V0AsWrittenTableOfSection2) {
  const std::vector<int> ctx = {64, 128, 512, 1024, 2048, 8192, 100000};
  const std::vector<std::pair<int, std::vector<int>>> rows = {
      {1, {1, 1, 1, 1, 1, 1, 1}},        {16, {1, 1, 1, 1, 1, 1, 1}},         {32, {9, 1, 1, 1, 1, 1, 1}},
      {64, {13, 13, 1, 1, 1, 1, 1}},     {128, {15, 15, 15, 15, 1, 1, 1}},    {160, {15, 15, 15, 15, 2, 2, 2}},
      {200, {16, 16, 16, 16, 16, 4, 4}}, {256, {16, 16, 16, 16, 16, 16, 16}},
  };
  for (const auto& [batch, expect] : rows)
    for (size_t i = 0; i < ctx.size(); ++i)
      EXPECT_EQ(splits("aiter-nonpersistent:split_rule=v0", batch, ctx[i], DType::fp8), expect[i])
          << "batch " << batch << " context " << ctx[i];
}

TEST(AiterNonpersistent, V0IntendedIsTheMetaRulePerRequestWithoutCaps) {
  EXPECT_EQ(splits("aiter-nonpersistent:split_rule=v0-intended", 4, 100000, DType::fp8), 16);
  EXPECT_EQ(splits("aiter-nonpersistent:split_rule=v0-intended", 4, 128, DType::fp8), 16);
  // Ragged: request 0 (short) and request 1 (long) get their own counts at batch 96.
  DecodeBatch b = typed_batch(96, 8192);
  b.kv_lens[0] = 128;
  const Plan p = plan("aiter-nonpersistent:split_rule=v0-intended", b);
  EXPECT_EQ(testing::pieces_per_request(p)[0], 2);
  EXPECT_EQ(testing::pieces_per_request(p)[1], 8);
  EXPECT_TRUE(plan_keeps_contract(p, b));
}

TEST(AiterNonpersistent, QueryTokensGetOneWorkgroupEachInBf16) {
  // sub_Q = 16 rows: 16 heads x 1 token per workgroup in bf16; fp8 (sub_Q = 128) takes 8 tokens.
  const DecodeBatch bf16 = typed_batch(2, 1000, DType::bf16, 16, 2);
  const Plan p = plan("aiter-nonpersistent:num_kv_splits=2", bf16);
  EXPECT_EQ(p.num_works(), 8);
  EXPECT_EQ(p.num_tiles(), 4);
  EXPECT_TRUE(plan_keeps_contract(p, bf16));
  const DecodeBatch fp8 = typed_batch(2, 1000, DType::fp8, 16, 2);
  const Plan q = plan("aiter-nonpersistent:num_kv_splits=2", fp8);
  EXPECT_EQ(q.num_works(), 4);
  EXPECT_EQ(q.works[0].qo_end - q.works[0].qo_start, 2);
}

TEST(AiterNonpersistent, RejectsBadKnobs) {
  const auto message = [](const std::string& spec) {
    const auto e = input_error_of([&] { make_policy(spec); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_EQ(message("aiter-nonpersistent:num_kv_splits=0"), "num_kv_splits: must be auto or 1..1024, got 0");
  EXPECT_EQ(message("aiter-nonpersistent:block=96"), "block: must be auto, 64 or 128, got 96");
  EXPECT_EQ(message("aiter-nonpersistent:split_rule=v1"), "split_rule: must be meta, v0 or v0-intended, got v1");
  EXPECT_EQ(message("aiter-nonpersistent:split_rule=v0,num_kv_splits=4"),
            "split_rule: chooses the split count only with num_kv_splits=auto; got split_rule=v0 with num_kv_splits=4");
  EXPECT_EQ(message("aiter-nonpersistent:graph_total_kv=10,num_kv_splits=4"),
            "graph_total_kv: freezes get_meta_param's input; it needs num_kv_splits=auto and split_rule=meta");
}

TEST(AiterNonpersistent, RejectsWorkloadsItHasNoKernelFor) {
  const auto field = [](const DecodeBatch& b) {
    const auto e = input_error_of([&] { plan("aiter-nonpersistent", b); });
    return e ? e->field() : std::string("no error");
  };
  EXPECT_EQ(field(typed_batch(4, 1000, DType::bf16, 32)), "heads");
  DecodeBatch mixed = typed_batch(4, 1000);
  mixed.kv_dtype = DType::fp8;
  EXPECT_EQ(field(mixed), "kv_dtype");
  DecodeBatch paged = typed_batch(4, 1000);
  paged.page_size = 16;
  EXPECT_EQ(field(paged), "page_size");
  EXPECT_EQ(field(typed_batch(4, 1000, DType::fp8, 16, 5)), "heads");  // no fp8 minimum block for 16 x 5
}

}  // namespace
}  // namespace mlasim::sim
