#include "mlasim/kernels/reduce_launch.h"

#include <gtest/gtest.h>

namespace mlasim::kernels {
namespace {

TEST(ReduceLaunch, OneRowGroupWhenQlenIsOne) { EXPECT_EQ(reduce_launch_shape(4, 16, 1, 256).row_groups, 1); }

TEST(ReduceLaunch, SmallWorkloadRunsOneBlockPerItem) {
  // 4 tiles x 16 heads x Wg: hw = int(2048 * 1.3) = 2662 > 64, Wg = min(cdiv(2662, 64), 4) = 4.
  EXPECT_EQ(reduce_launch_shape(4, 16, 4, 256).blocks, 4 * 16 * 4);
}

TEST(ReduceLaunch, RowGroupsSkipThirtyTwo) { EXPECT_EQ(reduce_launch_shape(1, 1, 20, 256).row_groups, 64); }

TEST(ReduceLaunch, LargeWorkloadGoesPersistent) {
  const ReduceLaunch r = reduce_launch_shape(1000, 128, 1, 132);
  EXPECT_EQ(r.blocks, 16 * 132);
}

}  // namespace
}  // namespace mlasim::kernels
