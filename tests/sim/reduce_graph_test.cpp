// The critical path through works -> reduce tiles -> outputs, on graphs small enough to check by hand.
#include "mlasim/sim/reduce_graph.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace mlasim::sim {
namespace {

TEST(ReduceGraph, PathRunsThroughTheLongestClusterChainAndItsTile) {
  // Cluster 0: works 0 (2 us) then 1 (3 us); cluster 1: work 2 (4 us). Works 1 and 2 feed tile 0 (1 us).
  const std::vector<double> work_us{2, 3, 4};
  const std::vector<int> previous{-1, 0, -1};
  const std::vector<int> tile{-1, 0, 0};
  const std::vector<double> tile_us{1};
  const CriticalPath p = reduce_critical_path({work_us, previous, tile, tile_us});
  EXPECT_DOUBLE_EQ(p.length_us, 6);
  EXPECT_EQ(p.works, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.tile, 0);
}

TEST(ReduceGraph, FinalWorksEndThePathWithoutATile) {
  const std::vector<double> work_us{5, 1};
  const std::vector<int> previous{-1, -1};
  const std::vector<int> tile{-1, 0};
  const std::vector<double> tile_us{2};
  const CriticalPath p = reduce_critical_path({work_us, previous, tile, tile_us});
  EXPECT_DOUBLE_EQ(p.length_us, 5);
  EXPECT_EQ(p.works, (std::vector<int>{0}));
  EXPECT_EQ(p.tile, -1);
}

TEST(ReduceGraph, UnfedTilesDoNotCount) {
  const std::vector<double> work_us{1};
  const std::vector<int> previous{-1};
  const std::vector<int> tile{-1};
  const std::vector<double> tile_us{100, 100};
  EXPECT_DOUBLE_EQ(reduce_critical_path({work_us, previous, tile, tile_us}).length_us, 1);
}

TEST(ReduceGraph, EmptyGraphHasZeroLength) { EXPECT_DOUBLE_EQ(reduce_critical_path({}).length_us, 0); }

TEST(ReduceGraph, RejectsACycleOfClusterOrder) {
  const std::vector<double> work_us{1, 1};
  const std::vector<int> previous{1, 0};
  const std::vector<int> tile{-1, -1};
  EXPECT_THROW(reduce_critical_path({work_us, previous, tile, {}}), std::invalid_argument);
}

TEST(ReduceGraph, RejectsSpansOfDifferentLengths) {
  const std::vector<double> work_us{1, 1};
  const std::vector<int> previous{-1};
  const std::vector<int> tile{-1, -1};
  EXPECT_THROW(reduce_critical_path({work_us, previous, tile, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace mlasim::sim
