// flashinfer-decode against split-policies.md section 4.3 I1 and worked example 5 P6 (transplanted to 256 SMs).
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
using testing::work_tokens;

TEST(FlashInferDecode, WorkedExampleP6AOccupancy1) {
  const DecodeBatch batch = uniform(4, 100000);
  const Plan p = plan("flashinfer-decode", batch);
  EXPECT_EQ(p.kernel, KernelKind::grid);
  EXPECT_EQ(p.model.payload_blocks, 1563);
  EXPECT_EQ(pieces_per_request(p), (std::vector<int>{64, 64, 64, 64}));
  EXPECT_EQ(p.num_work_lists(), 256);
  EXPECT_EQ(p.num_partials(), 256);
  EXPECT_EQ(p.works[63].kv_pages(), 100000 - 63 * 1563);
  EXPECT_EQ(p.works[64].batch_idx, 1);  // chunks are launched request-major
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferDecode, WorkedExampleP6AOccupancy2) {
  const Plan p = plan("flashinfer-decode:occupancy=2", uniform(4, 100000));
  EXPECT_EQ(p.model.payload_blocks, 782);
  EXPECT_EQ(pieces_per_request(p), (std::vector<int>{128, 128, 128, 128}));
  EXPECT_EQ(p.num_works(), 512);
}

TEST(FlashInferDecode, WorkedExampleP6B) {
  const Plan p = plan("flashinfer-decode", uniform(1, 8192));
  EXPECT_EQ(p.model.payload_blocks, 128);  // the 128-token floor
  EXPECT_EQ(work_tokens(p), std::vector<int64_t>(64, 128));
}

TEST(FlashInferDecode, FullGridMeansNoSplit) {
  const Plan p = plan("flashinfer-decode", uniform(256, 5000));
  EXPECT_EQ(p.num_works(), 256);
  EXPECT_EQ(p.num_partials(), 0);
  EXPECT_EQ(work_tokens(p), std::vector<int64_t>(256, 5000));
}

TEST(FlashInferDecode, RequestsBelowTheChunkFloorStayWhole) {
  // The chunk never drops below 128 tokens, so two 100-token requests stay one CTA each.
  const Plan p = plan("flashinfer-decode", uniform(2, 100));
  EXPECT_EQ(p.model.payload_blocks, 128);
  EXPECT_EQ(work_tokens(p), (std::vector<int64_t>{100, 100}));
  EXPECT_EQ(p.num_partials(), 0);
}

TEST(FlashInferDecode, Heads128UseEightHeadGroups) {
  const DecodeBatch batch = uniform(4, 100000, 128);
  const Plan p = plan("flashinfer-decode", batch);
  EXPECT_EQ(p.derived.qk_batch_ratio, 8);
  EXPECT_EQ(p.model.payload_blocks, 12500);  // 4 x cdiv(100000, c) x 8 <= 256
  EXPECT_EQ(p.num_works(), 256);
  EXPECT_EQ(p.works[0].batch_idx, 0);
  EXPECT_EQ(p.works[32].batch_idx, 1);  // head group 1 of request 0 after all chunks of group 0
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferDecode, PagedKvChunksInPages) {
  DecodeBatch batch = uniform(1, 8192);
  batch.page_size = 16;
  const Plan p = plan("flashinfer-decode", batch);
  EXPECT_EQ(p.model.payload_blocks, 8);  // 128 tokens = 8 pages
  EXPECT_EQ(p.num_works(), 64);
  EXPECT_TRUE(plan_keeps_contract(p, batch));
}

TEST(FlashInferDecode, RejectsBadKnobsAndWorkloads) {
  const auto message = [](const std::string& spec, const DecodeBatch& b) {
    const auto e = input_error_of([&] { plan(spec, b); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_EQ(message("flashinfer-decode:occupancy=0", uniform(1, 100)), "occupancy: must be 1..8, got 0");
  EXPECT_EQ(message("flashinfer-decode:occupancy=two", uniform(1, 100)), "occupancy: must be 1..8, got two");
  DecodeBatch mtp = uniform(2, 100);
  mtp.qo_lens = {2, 2};
  EXPECT_EQ(message("flashinfer-decode", mtp).substr(0, 7), "qo_len:");
  EXPECT_EQ(message("flashinfer-decode", uniform(2, 100, 24)).substr(0, 6), "heads:");
}

}  // namespace
}  // namespace mlasim::sim
