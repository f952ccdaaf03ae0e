#include "mlasim/validate/step_spread.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace mlasim::validate {

namespace {
constexpr double kZ95 = 1.96;
constexpr double kConfirmShare = 0.05;  // the +-5 % of a predicted change that an after trace should confirm
}  // namespace

double StepSpread::change_ci95_us() const { return std::sqrt(2.0) * mean_ci95_us; }

StepSpread step_spread(const std::vector<double>& times_us, const std::vector<long long>& batch) {
  if (times_us.size() != batch.size()) throw std::invalid_argument("step_spread: one batch key per step");
  struct Group {
    int n = 0;
    double shift = 0, sum = 0, sum_sq = 0;  // of the times less the batch's first, which keeps the squares exact
  };
  std::map<long long, Group> groups;
  for (size_t i = 0; i < times_us.size(); ++i) {
    Group& g = groups[batch[i]];
    if (g.n++ == 0) g.shift = times_us[i];
    const double x = times_us[i] - g.shift;
    g.sum += x;
    g.sum_sq += x * x;
  }
  StepSpread s;
  s.steps = static_cast<int>(times_us.size());
  s.batches = static_cast<int>(groups.size());
  // The mean step weighs each batch by its steps, so its variance is Σ n_g var_g / N²; the pooled sd divides the
  // squares about each batch's mean by the degrees of freedom they leave.
  double squares = 0, mean_variance = 0;
  int freedom = 0;
  for (const auto& [key, g] : groups) {
    if (g.n < 2) continue;
    const double mean = g.sum / g.n;
    const double about_mean = std::max(0.0, g.sum_sq - g.n * mean * mean);
    squares += about_mean;
    freedom += g.n - 1;
    mean_variance += g.n * about_mean / (g.n - 1);
  }
  if (freedom == 0) return s;
  s.sd_us = std::sqrt(squares / freedom);
  s.mean_ci95_us = kZ95 * std::sqrt(mean_variance) / s.steps;
  return s;
}

std::optional<long long> steps_to_resolve(const StepSpread& s, double tolerance_us) {
  if (!(tolerance_us > 0) || s.mean_ci95_us <= 0 || s.steps <= 0) return std::nullopt;
  // The change's half width shrinks as 1/sqrt(steps): it is change_ci95_us() at s.steps.
  const double ratio = s.change_ci95_us() / tolerance_us;
  return static_cast<long long>(std::ceil(s.steps * ratio * ratio));
}

std::optional<long long> steps_to_confirm(const StepSpread& s, double change_us) {
  return steps_to_resolve(s, kConfirmShare * std::abs(change_us));
}

std::string spread_text(const StepSpread& s, double mean_us) {
  if (s.mean_ci95_us <= 0) return "";
  return fmt::format(
      "a step's sd {:.2f} us about its batch's mean ({} steps, {} batch{}): the measured mean {:.2f} "
      "+-{:.2f} us (95 %)",
      s.sd_us, s.steps, s.batches, s.batches == 1 ? "" : "es", mean_us, s.mean_ci95_us);
}

std::string confirm_text(const StepSpread& s, double change_us) {
  if (change_us == 0 || s.mean_ci95_us <= 0) return "";
  const double tolerance = kConfirmShare * std::abs(change_us);
  const std::optional<long long> need = steps_to_confirm(s, change_us);
  return fmt::format(
      "+-5 % of the predicted change ({:+.2f} us) is +-{:.2f} us; {} steps before and {} after measure the change to "
      "+-{:.2f} us (95 %, at this trace's spread): {}",
      change_us, tolerance, s.steps, s.steps, s.change_ci95_us(),
      need && *need > s.steps ? fmt::format("take at least {} steps of each", *need) : std::string("enough"));
}

}  // namespace mlasim::validate
