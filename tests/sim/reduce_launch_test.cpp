// AITER's reduce launch rules (aiter-v1-planner spec §7). The one implementation is sim::aiter_reduce_launch; the
// GPU reduce (kernels/src/mla_runner.cu) launches with it too.
#include "mlasim/sim/reduce_launch.h"

#include <gtest/gtest.h>

namespace mlasim::sim {
namespace {

TEST(ReduceLaunch, WorkedExampleIsAGridOfHeadsByTiles) {
  // §9a: NT = 4, H = 16, qlen 1 on 256 CUs -> Wg = 1, grid (16, 1, 4) = 64 blocks.
  const ReduceLaunch r = aiter_reduce_launch(4, 16, 256, 1);
  EXPECT_EQ(r.row_groups, 1);
  EXPECT_FALSE(r.persistent);
  EXPECT_EQ(r.blocks, 64);
}

TEST(ReduceLaunch, FewTilesWithSeveralRowsSplitRowsIntoGroups) {
  // int(2048 x 1.3 in single precision) = 2662 > 64 -> cdiv(2662, 64) = 42, capped by qlen 4.
  const ReduceLaunch r = aiter_reduce_launch(4, 16, 256, 4);
  EXPECT_EQ(r.row_groups, 4);
  EXPECT_EQ(r.blocks, 4 * 16 * 4);  // a grid: one block per (tile, row group, head)
}

TEST(ReduceLaunch, RowGroupsRoundUpToTheBuiltCounts) {
  EXPECT_EQ(aiter_reduce_launch(4, 16, 256, 3).row_groups, 4);    // 3 -> power of two 4
  EXPECT_EQ(aiter_reduce_launch(4, 16, 256, 32).row_groups, 64);  // 32 is not built: 64
  EXPECT_EQ(aiter_reduce_launch(1, 1, 256, 20).row_groups, 64);   // 20 -> 32 -> 64
}

TEST(ReduceLaunch, RowGroupsBeyondTheLargestBuiltCountClampTo256) {
  // wl = 1: Wg = min(2662, 300) = 300 -> power of two 512, clamped onto the largest built count.
  EXPECT_EQ(aiter_reduce_launch(1, 1, 256, 300).row_groups, 256);
  EXPECT_EQ(aiter_reduce_launch(1, 1, 256, 257).row_groups, 256);
}

TEST(ReduceLaunch, ManyTilesKeepOneRowGroup) {
  EXPECT_EQ(aiter_reduce_launch(256, 16, 256, 4).row_groups, 1);  // wl = 4096 >= 2662
}

TEST(ReduceLaunch, GridUpToSixteenBlocksPerCu) {
  const ReduceLaunch r = aiter_reduce_launch(256, 16, 256, 1);
  EXPECT_FALSE(r.persistent);
  EXPECT_EQ(r.blocks, 4096);
}

TEST(ReduceLaunch, BeyondSixteenBlocksPerCuThePersistentKernelRuns) {
  const ReduceLaunch r = aiter_reduce_launch(257, 16, 256, 1);
  EXPECT_TRUE(r.persistent);
  EXPECT_EQ(r.blocks, 4096);
  EXPECT_EQ(r.work_items(), 257 * 16);
  // An H100-sized GPU (132 SMs) with a large 128-head plan.
  EXPECT_EQ(aiter_reduce_launch(1000, 128, 132, 1).blocks, 16 * 132);
}

TEST(ReduceLaunch, ItemBytesReadPartialsWithLseAndWriteBf16) {
  EXPECT_DOUBLE_EQ(reduce_read_bytes(1, 65), 65 * 2052.0);
  EXPECT_DOUBLE_EQ(reduce_write_bytes(2), 2048.0);
}

}  // namespace
}  // namespace mlasim::sim
