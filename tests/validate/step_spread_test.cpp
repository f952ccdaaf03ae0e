// How precisely a trace measures its mean step: the spread of each batch's steps about its own mean, the mean's 95 %
// interval, and the steps a change needs to be told to a tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mlasim/validate/step_spread.h"

namespace mlasim::validate {
namespace {

TEST(StepSpread, OneBatchGivesTheSampleSdAndTheMeansInterval) {
  // 800 +- 2: the sample variance of {798, 802, 798, 802} is 16 / 3.
  const StepSpread s = step_spread({798, 802, 798, 802}, {16, 16, 16, 16});
  EXPECT_EQ(s.steps, 4);
  EXPECT_EQ(s.batches, 1);
  EXPECT_NEAR(s.sd_us, std::sqrt(16.0 / 3), 1e-12);
  EXPECT_NEAR(s.mean_ci95_us, 1.96 * std::sqrt(16.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(s.change_ci95_us(), std::sqrt(2.0) * s.mean_ci95_us, 1e-12);
}

TEST(StepSpread, EachBatchSpreadsAboutItsOwnMean) {
  // Two batches 700 us apart with the same spread: mixing them adds nothing, as it does when each is shifted.
  const StepSpread one = step_spread({798, 802, 798, 802}, {1, 1, 1, 1});
  const StepSpread mixed = step_spread({798, 1502, 802, 1498, 798, 1502, 802, 1498}, {8, 16, 8, 16, 8, 16, 8, 16});
  EXPECT_EQ(mixed.batches, 2);
  EXPECT_NEAR(mixed.sd_us, one.sd_us, 1e-9);
  // Twice the steps at the same spread: the mean's interval shrinks by sqrt(2).
  EXPECT_NEAR(mixed.mean_ci95_us, one.mean_ci95_us / std::sqrt(2.0), 1e-9);
  // Large step times keep their squares exact.
  const StepSpread far = step_spread({1e6 - 2, 1e6 + 2, 1e6 - 2, 1e6 + 2}, {1, 1, 1, 1});
  EXPECT_NEAR(far.sd_us, one.sd_us, 1e-9);
}

TEST(StepSpread, ABatchOfOneStepAddsNoSpreadAndNoneLeavesNoInterval) {
  const StepSpread s = step_spread({798, 802, 798, 802, 5000}, {1, 1, 1, 1, 2});
  EXPECT_NEAR(s.sd_us, std::sqrt(16.0 / 3), 1e-12);
  const StepSpread none = step_spread({800, 900}, {1, 2});
  EXPECT_EQ(none.sd_us, 0);
  EXPECT_EQ(none.mean_ci95_us, 0);
  EXPECT_FALSE(steps_to_resolve(none, 1.0).has_value());
  EXPECT_THROW(step_spread({800, 900}, {1}), std::invalid_argument);
}

TEST(StepSpread, StepsToResolveAChangeGrowAsTheSquareOfTheTolerance) {
  const StepSpread s = step_spread({798, 802, 798, 802}, {1, 1, 1, 1});
  // At the change's own half width, the trace's steps are enough; at half of it, four times as many.
  const long long at = *steps_to_resolve(s, s.change_ci95_us());
  EXPECT_EQ(at, 4);
  EXPECT_EQ(*steps_to_resolve(s, s.change_ci95_us() / 2), 16);
  EXPECT_FALSE(steps_to_resolve(s, 0).has_value());
}

}  // namespace
}  // namespace mlasim::validate
