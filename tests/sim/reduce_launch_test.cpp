// AITER's reduce launch rules (aiter-v1-planner spec §7).
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
  // int(2048 * 1.3f) = 2662 > 64 -> cdiv(2662, 64) = 42, capped by qlen 4.
  EXPECT_EQ(aiter_reduce_launch(4, 16, 256, 4).row_groups, 4);
}

TEST(ReduceLaunch, RowGroupsRoundUpToTheBuiltCounts) {
  EXPECT_EQ(aiter_reduce_launch(4, 16, 256, 3).row_groups, 4);    // 3 -> power of two 4
  EXPECT_EQ(aiter_reduce_launch(4, 16, 256, 32).row_groups, 64);  // 32 is not built: 64
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
}

TEST(ReduceLaunch, ItemBytesReadPartialsWithLseAndWriteBf16) {
  EXPECT_DOUBLE_EQ(reduce_read_bytes(1, 65), 65 * 2052.0);
  EXPECT_DOUBLE_EQ(reduce_write_bytes(2), 2048.0);
}

}  // namespace
}  // namespace mlasim::sim
