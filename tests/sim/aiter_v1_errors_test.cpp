// Bad planner input: one clear error naming the field, never a crash or a division by zero.
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/split_policy.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;

AiterV1Args good() {
  AiterV1Args a;
  a.seqlens_kv_indptr = {0, 1000, 3000};
  a.seqlens_qo_indptr = {0, 1, 2};
  a.kv_last_page_lens = {1, 1};
  return a;
}

std::string error_of(const AiterV1Args& a) {
  const auto e = input_error_of([&] { plan_aiter_v1(a); });
  return e ? e->what() : "no error";
}

TEST(AiterV1Errors, ZeroSplitBudgetIsRejected) {
  AiterV1Args a = good();
  a.max_split_per_batch = 0;
  EXPECT_EQ(error_of(a), "max_split_per_batch: must be -1 (auto) or >= 1, got 0");
}

TEST(AiterV1Errors, UnsupportedHeadsListTheSupportedOnes) {
  AiterV1Args a = good();
  a.num_heads_per_head_k = 24;
  EXPECT_EQ(error_of(a),
            "heads: 24 q heads are not supported on gfx950 with fp8/fp8 and qlen 1; supported: 16, 32, 48, "
            "64, 80, 96, 112, 128");
}

TEST(AiterV1Errors, KvIndptrMustStartAtZero) {
  AiterV1Args a = good();
  a.seqlens_kv_indptr = {5, 1000, 3000};
  EXPECT_EQ(error_of(a), "seqlens_kv_indptr: must start at 0 (the serial planner assumes it), got 5");
}

TEST(AiterV1Errors, EmptyBatch) {
  AiterV1Args a = good();
  a.seqlens_kv_indptr = {0};
  EXPECT_EQ(error_of(a), "seqlens_kv_indptr: the batch is empty: need at least 2 entries");
}

TEST(AiterV1Errors, ZeroLengthRequest) {
  AiterV1Args a = good();
  a.seqlens_kv_indptr = {0, 1000, 1000};
  EXPECT_EQ(error_of(a), "seqlens_kv_indptr: must increase strictly (every request needs >= 1 page); entry 2 is 1000");
}

TEST(AiterV1Errors, PageSizeAndGranularityArePowersOfTwo) {
  AiterV1Args a = good();
  a.page_size = 3;
  EXPECT_EQ(error_of(a), "page_size: must be a power of two (1, 2, 4, ...), got 3");
  a = good();
  a.kv_granularity = 0;
  EXPECT_EQ(error_of(a), "kv_granularity: must be a power of two (16, 32, 64, ...), got 0");
}

TEST(AiterV1Errors, FoldingNeedsUniformQueryLengths) {
  AiterV1Args a = good();
  a.num_heads_per_head_k = 128;
  a.q_dtype = a.kv_dtype = DType::bf16;
  a.arch = Arch::gfx942;
  a.max_seqlen_qo = 2;
  a.uni_seqlen_qo = -1;
  a.seqlens_qo_indptr = {0, 1, 3};
  EXPECT_EQ(error_of(a),
            "uni_seqlen_qo: head folding (128 heads) needs a uniform query length; AITER indexes out of "
            "range otherwise");
}

TEST(AiterV1Errors, UnsupportedHeadsOnANonAmdTargetSayWhichTargets) {
  AiterV1Args a = good();
  a.arch = parse_arch("sm_90");
  a.q_dtype = a.kv_dtype = DType::bf16;
  a.num_heads_per_head_k = 8;
  EXPECT_EQ(error_of(a).rfind("heads: 8 q heads are not supported on other targets with bf16/bf16 and qlen 1; ", 0), 0u)
      << error_of(a);
}

TEST(AiterV1Errors, PolicyKnobsAreValidatedByTheirTable) {
  auto msg = [](const char* spec) {
    const auto e = input_error_of([&] { make_policy(spec); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_EQ(msg("aiter-v1:max_split_per_batch=0"), "max_split_per_batch: must be -1, vllm or 1..4096, got 0");
  EXPECT_EQ(msg("aiter-v1:max_split=4"),
            "policy: 'aiter-v1' has no knob 'max_split'; knobs: max_split_per_batch, "
            "experimental");
  EXPECT_EQ(msg("aiter-v1:max_split_per_batch"),
            "policy: knob 'max_split_per_batch' in "
            "'aiter-v1:max_split_per_batch' needs key=value");
  EXPECT_EQ(msg("aiter-v1-adaptive:rule=cube"), "rule: must be sqrt or width, got cube");
  EXPECT_EQ(msg("nonsense").rfind("policy: unknown policy 'nonsense'; known: aiter-v1, aiter-v1-adaptive", 0), 0u);
}

TEST(AiterV1Errors, VllmDefaultBudgetFollowsHeadCount) {
  EXPECT_EQ(vllm_max_split_per_batch(16, 256, 4), -1);
  EXPECT_EQ(vllm_max_split_per_batch(128, 256, 4), 32);
  EXPECT_EQ(vllm_max_split_per_batch(128, 256, 64), 4);
  EXPECT_EQ(vllm_max_split_per_batch(128, 256, 512), 1);
}

}  // namespace
}  // namespace mlasim::sim
