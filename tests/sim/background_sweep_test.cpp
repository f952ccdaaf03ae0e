// The explorer's background sweep: the outcome equals the direct sweep's, progress only grows, errors and
// cancellation come back as an outcome, and polling from another thread is race-free (this suite runs under
// ThreadSanitizer in make test).
#include "mlasim/sim/background_sweep.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "mlasim/model/input_error.h"

namespace mlasim::sim {
namespace {

SweepGrid grid(std::vector<int> batches, std::vector<int> contexts) {
  SweepGrid g;
  g.gpus = {load_gpu("h100")};
  g.batches = std::move(batches);
  g.contexts = std::move(contexts);
  g.policies = {"aiter-v1", "flashmla"};
  return g;
}

// Polls as the explorer's timer does, recording progress, until the outcome arrives.
BackgroundSweep::Outcome wait_for(BackgroundSweep& sweep, std::vector<double>* progress = nullptr) {
  for (;;) {
    if (progress) progress->push_back(sweep.progress());
    if (auto out = sweep.take_if_finished()) return *out;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(BackgroundSweep, OutcomeEqualsTheDirectSweepGridByGrid) {
  const SweepGrid line = grid({1, 4, 16}, {1024, 8192});
  const SweepGrid heat = grid({1, 2, 4, 8, 16, 32, 64}, {512, 4096, 32768});
  BackgroundSweep sweep;
  sweep.start({line, heat});
  EXPECT_TRUE(sweep.running());
  const BackgroundSweep::Outcome out = wait_for(sweep);
  EXPECT_FALSE(sweep.running());
  ASSERT_TRUE(out.error.empty()) << out.error;
  ASSERT_EQ(out.results.size(), 2u);
  const SweepResult direct[] = {run_sweep(line), run_sweep(heat)};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(out.results[i].points.size(), direct[i].points.size());
    for (size_t p = 0; p < direct[i].points.size(); ++p)
      EXPECT_DOUBLE_EQ(out.results[i].metrics[p].kernel_us, direct[i].metrics[p].kernel_us)
          << "grid " << i << " point " << p;
  }
}

TEST(BackgroundSweep, ProgressOnlyGrowsAndEndsAtOne) {
  BackgroundSweep sweep;
  sweep.start({grid({1, 2, 4, 8, 16, 32, 64, 128, 256}, {1024, 4096, 16384, 65536})});
  std::vector<double> seen;
  const BackgroundSweep::Outcome out = wait_for(sweep, &seen);
  ASSERT_TRUE(out.error.empty()) << out.error;
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  EXPECT_EQ(seen.back(), 1.0);
  for (double p : seen) EXPECT_LE(p, 1.0);
}

TEST(BackgroundSweep, ABadGridIsRefusedBeforeAnythingStarts) {
  SweepGrid bad = grid({1, 2}, {1024});
  bad.policies = {"aiter-v1", "bogus"};
  BackgroundSweep sweep;
  EXPECT_THROW(sweep.start({bad}), InputError);
  EXPECT_FALSE(sweep.running());
}

TEST(BackgroundSweep, APointThePolicyCannotPlanComesBackAsTheOutcomesError) {
  // Passes the grid check, fails while planning: FlashMLA's original scheduler takes fewer than 4096 requests.
  SweepGrid g = grid({1, 4096}, {1024});
  g.policies = {"aiter-v1", "flashmla:scheduler=2025"};
  BackgroundSweep sweep;
  sweep.start({g});
  const BackgroundSweep::Outcome out = wait_for(sweep);
  EXPECT_TRUE(out.results.empty());
  EXPECT_NE(out.error.find("batch"), std::string::npos) << out.error;
}

TEST(BackgroundSweep, StartingWhileRunningIsALogicError) {
  BackgroundSweep sweep;
  sweep.start({grid({1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, {1024, 4096, 16384, 65536, 131072})});
  EXPECT_THROW(sweep.start({grid({1}, {1024})}), std::logic_error);
  wait_for(sweep);
  sweep.start({grid({1}, {1024})});  // free again once the outcome is taken
  EXPECT_TRUE(wait_for(sweep).error.empty());
}

TEST(BackgroundSweep, CancelStopsTheWorkerWithACancelledOutcome) {
  BackgroundSweep sweep;
  std::vector<int> batches;
  for (int b = 1; b <= 4096; b += 7) batches.push_back(b);
  sweep.start({grid(batches, {1024, 4096, 16384, 65536, 131072})});
  sweep.cancel();
  const BackgroundSweep::Outcome out = wait_for(sweep);
  // A sweep this size takes seconds; it either stopped at a chunk boundary or (on a very fast machine) finished.
  if (!out.error.empty()) {
    EXPECT_EQ(out.error, "cancelled");
    EXPECT_TRUE(out.results.empty());
  } else {
    EXPECT_EQ(out.results.size(), 1u);
  }
}

}  // namespace
}  // namespace mlasim::sim
