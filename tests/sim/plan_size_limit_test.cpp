// A plan holds at most kMaxWorksPerPlan works: a batch that would need more is an InputError naming "works",
// raised early (while the works are added, or from the buffer sizes) rather than after seconds of planning.
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/split_policy.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::h100;

std::string field_of_error(const std::string& spec, const DecodeBatch& batch) {
  const auto e = input_error_of([&] { make_policy(spec)->plan({batch, h100(), 0}); });
  return e ? e->field() : "no error";
}

TEST(PlanSizeLimit, FixedSplitsOfAHugeBatchAreRefusedNamingWorks) {
  // 4096 requests x 1024 splits = 4.2 million works: four times the limit.
  const DecodeBatch batch = DecodeBatch::uniform(4096, 100000);
  EXPECT_EQ(field_of_error("fixed:splits=1024", batch), "works");
}

TEST(PlanSizeLimit, OneWorkPastTheLimitIsRefused) {
  // 1025 requests x 1024 splits of 16 tokens: 1024 works more than the limit of 1024 x 1024.
  ASSERT_EQ(kMaxWorksPerPlan, 1024 * 1024);
  EXPECT_EQ(field_of_error("fixed:splits=1024,granule=16", DecodeBatch::uniform(1025, 16 * 1024)), "works");
}

TEST(PlanSizeLimit, EveryPolicyRefusesOrPlansWithinTheLimit) {
  // 4000 requests (FlashMLA's scheduler takes fewer than 4096) of 400k tokens (1.6e9, near the int32 page bound), split
  // as finely as each policy's knobs allow.
  const DecodeBatch batch = DecodeBatch::uniform(4000, 400000);
  for (const std::string spec : {"aiter-v1:max_split_per_batch=4096", "aiter-v1-adaptive", "aiter-nonpersistent",
                                 "fixed:splits=1024", "flashmla", "flashinfer-mla", "flashinfer-decode"}) {
    try {
      const Plan p = make_policy(spec)->plan({batch, h100(), 0});
      EXPECT_LE(p.num_works(), kMaxWorksPerPlan) << spec;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "works") << spec << ": " << e.what();
    }
  }
}

TEST(PlanSizeLimit, AiterV1BufferSizesPastTheLimitAreRefused) {
  // Query length 4096 at 128 heads: thousands of q tiles per request, so work_info would need millions of rows.
  AiterV1Args a;
  a.num_heads_per_head_k = 128;
  a.max_seqlen_qo = 4096;
  a.uni_seqlen_qo = 4096;
  a.seqlens_kv_indptr = {0, 8192, 16384};
  a.seqlens_qo_indptr = {0, 4096, 8192};
  a.kv_last_page_lens = {1, 1};
  const auto e = input_error_of([&] { aiter_v1_buffer_sizes(a); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "works") << e->what();
}

}  // namespace
}  // namespace mlasim::sim
