// fixed: N equal contiguous splits per request (Triton-style).
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::plan;
using testing::plan_keeps_contract;
using testing::uniform;
using testing::work_tokens;

TEST(Fixed, DefaultIsFourSplitsRoundedToGranules) {
  // cdiv(1000, 4) = 250 -> 256 tokens per split; the last split holds the rest.
  const Plan p = plan("fixed", uniform(1, 1000));
  EXPECT_EQ(p.kernel, KernelKind::grid);
  EXPECT_EQ(p.derived.num_splits, 4);
  EXPECT_EQ(work_tokens(p), (std::vector<int64_t>{256, 256, 256, 232}));
  EXPECT_EQ(p.num_partials(), 4);
}

TEST(Fixed, ShortRequestGetsFewerSplits) {
  EXPECT_EQ(work_tokens(plan("fixed", uniform(1, 40))), (std::vector<int64_t>{16, 16, 8}));
  EXPECT_EQ(work_tokens(plan("fixed:splits=16", uniform(1, 16))), (std::vector<int64_t>{16}));
}

TEST(Fixed, OneSplitWritesTheOutput) {
  const Plan p = plan("fixed:splits=1", uniform(3, 500));
  EXPECT_EQ(work_tokens(p), std::vector<int64_t>(3, 500));
  EXPECT_EQ(p.num_partials(), 0);
  EXPECT_EQ(p.reduce_indptr, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(Fixed, LaunchOrderIsRequestThenSplit) {
  const Plan p = plan("fixed:splits=2,granule=1", uniform(2, 10));
  EXPECT_EQ(p.num_work_lists(), 4);
  EXPECT_EQ(p.works[0].batch_idx, 0);
  EXPECT_EQ(p.works[1].batch_idx, 1);
  EXPECT_EQ(p.works[2].kv_start, 5);
  EXPECT_EQ(p.works[3].kv_start, 15);
  EXPECT_EQ(p.works[0].kv_offset, 5);
}

TEST(Fixed, HeadsPerWorkgroupFoldsHeadGroups) {
  const DecodeBatch batch = uniform(2, 4096, 128);
  const Plan p = plan("fixed:splits=4,heads_per_wg=16", batch);
  EXPECT_EQ(p.derived.qk_batch_ratio, 8);
  EXPECT_EQ(p.derived.num_heads_eff, 16);
  EXPECT_EQ(p.num_works(), 2 * 8 * 4);
  EXPECT_EQ(p.works[1].batch_idx, 8);  // request 1, head group 0: requests launch fastest
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(Fixed, RejectsBadKnobs) {
  const auto message = [](const std::string& spec, const DecodeBatch& b) {
    const auto e = input_error_of([&] { plan(spec, b); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_EQ(message("fixed:splits=0", uniform(1, 100)), "splits: must be 1..1024, got 0");
  EXPECT_EQ(message("fixed:granule=0", uniform(1, 100)), "granule: must be 1..65536, got 0");
  EXPECT_EQ(message("fixed:heads_per_wg=many", uniform(1, 100)), "heads_per_wg: must be all or 1..128, got many");
  EXPECT_EQ(message("fixed:heads_per_wg=24", uniform(1, 100, 128)),
            "heads_per_wg: must divide the 128 q heads, got 24");
  EXPECT_EQ(message("fixed:splits=4,split=2", uniform(1, 100)).substr(0, 7), "policy:");
}

}  // namespace
}  // namespace mlasim::sim
