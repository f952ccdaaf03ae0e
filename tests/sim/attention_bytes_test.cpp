// What an attention run moves through L2 (sim/attention_bytes.h), from first principles on plain plans.
#include <gtest/gtest.h>

#include "mlasim/sim/attention_bytes.h"
#include "mlasim/sim/evaluation.h"
#include "sim_test_support.h"

namespace mlasim::sim {
namespace {

WorkloadContext h100_bf16(int batch, int tokens) { return testing::hopper_context("h100", batch, tokens); }

constexpr double kKvTokenMB = 576 * 2 / 1e6;            // one token's latent and RoPE key, bf16
constexpr double kOutputRowMB = 128 * 2.0 * 512 / 1e6;  // one bf16 output row of 128 heads
constexpr double kPartialRowMB = 128 * (4.0 * 512 + 4) / 1e6;

TEST(AttentionBytes, AnUnsplitPlanReadsTheKvAndWritesItsOutputs) {
  const WorkloadContext ctx = h100_bf16(16, 4096);
  const AttentionBytes b = attention_bytes(*evaluate("fixed:splits=1", ctx).plan, ctx.batch);
  EXPECT_NEAR(b.stage1_read_mb, 16 * 4096 * kKvTokenMB, 1e-6);
  EXPECT_NEAR(b.stage1_written_mb, 16 * kOutputRowMB, 1e-9);
  EXPECT_EQ(b.reduce_read_mb, 0.0);
  EXPECT_EQ(b.reduce_written_mb, 0.0);
}

TEST(AttentionBytes, ASplitPlanWritesPartialsTheReduceReadsBack) {
  const WorkloadContext ctx = h100_bf16(16, 4096);
  const AttentionBytes b = attention_bytes(*evaluate("fixed:splits=4", ctx).plan, ctx.batch);
  EXPECT_NEAR(b.stage1_read_mb, 16 * 4096 * kKvTokenMB, 1e-6);  // the same KV, cut four ways
  EXPECT_NEAR(b.stage1_written_mb, 64 * kPartialRowMB, 1e-9);
  EXPECT_NEAR(b.reduce_read_mb, b.stage1_written_mb, 1e-12);
  EXPECT_NEAR(b.reduce_written_mb, 16 * kOutputRowMB, 1e-9);
}

}  // namespace
}  // namespace mlasim::sim
