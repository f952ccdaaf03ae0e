#pragma once
// How precisely a trace measures its mean step (docs/step.md §3): steps of one batch vary from step to step (clocks,
// launch jitter, what the L2 holds), so a trace of N steps knows its mean to about 2 sd / sqrt(N). That decides
// whether an "after" trace of the same length can confirm a predicted change: ±5 % of a 1 % change of a 800 µs step
// is 0.4 µs, finer than most traces' means.
//
//   const StepSpread s = step_spread(times_us, batch_of_each_step);
//   s.mean_ci95_us;                       // the measured mean's 95 % half width
//   steps_to_confirm(s, change);          // steps before and after that tell the change to ±5 %
#include <optional>
#include <string>
#include <vector>

namespace mlasim::validate {

struct StepSpread {
  int steps = 0;
  int batches = 0;          // distinct batches the steps ran: each one's spread is around its own mean
  double sd_us = 0;         // one step's standard deviation about its batch's mean (pooled over the batches)
  double mean_ci95_us = 0;  // the 95 % half width of the mean step (1.96 standard errors)
  // The 95 % half width of the change between this trace's mean and that of another trace of as many steps of the
  // same batches and spread, unpaired: sqrt(2) times mean_ci95_us.
  double change_ci95_us() const;
};

// `times_us[i]` is step i's time, `batch[i]` any key of the batch it ran (steps of one key share a mean). A batch
// of one step adds no spread. Needs times_us.size() == batch.size().
StepSpread step_spread(const std::vector<double>& times_us, const std::vector<long long>& batch);

// Steps (each, before and after) for a change's 95 % half width to be within `tolerance_us`, at this trace's spread
// and mix of batches; nullopt where the tolerance is not above 0 or the trace has no spread to go by.
std::optional<long long> steps_to_resolve(const StepSpread& s, double tolerance_us);
// The same for +-5 % of a predicted change of `change_us` (nullopt for no change): what `confirm` and JSON's
// steps_to_confirm_5pct say.
std::optional<long long> steps_to_confirm(const StepSpread& s, double change_us);

// What the text report and the explorer print: the spread and the mean's interval ("a step's sd 3.19 us about its
// batch's mean (50 steps, 1 batch): the measured mean 770.94 +-0.89 us (95 %)"), and whether traces as long as this
// one confirm a predicted change of `change_us` to +-5 % ("... : enough", or how many steps it takes). "" where the
// trace has no spread to go by, or there is no change.
std::string spread_text(const StepSpread& s, double mean_us);
std::string confirm_text(const StepSpread& s, double change_us);

}  // namespace mlasim::validate
