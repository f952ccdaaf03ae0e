#include "mlasim/validate/repeatability.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "mlasim/validate/error_report.h"
#include "mlasim/validate/measurement_sessions.h"

namespace mlasim::validate {
namespace {

struct Pair {
  double first = 0, second = 0;
};

// The share of workloads whose fastest policy in `a` is within 3 % of the fastest in `b` (times in the pairs).
double best_within_3pct(const std::map<std::string, std::vector<Pair>>& groups, bool reverse, int& workloads) {
  int within = 0;
  workloads = 0;
  for (const auto& [key, pairs] : groups) {
    if (pairs.size() < 2) continue;
    ++workloads;
    const auto a = [reverse](const Pair& p) { return reverse ? p.second : p.first; };
    const auto b = [reverse](const Pair& p) { return reverse ? p.first : p.second; };
    const Pair& pick =
        *std::min_element(pairs.begin(), pairs.end(), [&](const Pair& x, const Pair& y) { return a(x) < a(y); });
    double best = b(pairs.front());
    for (const Pair& p : pairs) best = std::min(best, b(p));
    within += b(pick) <= 1.03 * best;
  }
  return workloads ? 100.0 * within / workloads : 0.0;
}

}  // namespace

RepeatabilityStats measurement_repeatability(const std::vector<MeasurementRow>& first,
                                             const std::vector<MeasurementRow>& second) {
  std::map<std::string, const MeasurementRow*> by_key;
  for (const MeasurementRow& r : second)
    if (r.kernel_us) by_key[configuration_key(r)] = &r;
  RepeatabilityStats s;
  std::vector<double> diffs;
  std::map<std::string, std::vector<Pair>> groups;
  for (const MeasurementRow& r : first) {
    if (!r.kernel_us) continue;
    const auto it = by_key.find(configuration_key(r));
    if (it == by_key.end()) {
      ++s.unmatched;
      continue;
    }
    const double d = *it->second->kernel_us / *r.kernel_us - 1.0;
    diffs.push_back(100.0 * d);
    groups[workload_key(r)].push_back({*r.kernel_us, *it->second->kernel_us});
  }
  s.matched = static_cast<int>(diffs.size());
  if (diffs.empty()) return s;
  // The same statistics, and the same percentile, as the model's errors get (error_report.h).
  const ErrorStats e = error_stats(diffs);
  s.median_abs_diff_pct = e.p50_pct;
  s.p90_abs_diff_pct = e.p90_pct;
  s.max_abs_diff_pct = e.max_pct;
  s.mean_signed_diff_pct = e.mean_signed_pct;
  s.best_within_3pct_pct = best_within_3pct(groups, false, s.workloads);
  s.best_within_3pct_reverse_pct = best_within_3pct(groups, true, s.workloads);
  return s;
}

nlohmann::ordered_json repeatability_json(const RepeatabilityStats& s) {
  return {{"matched", s.matched},
          {"unmatched", s.unmatched},
          {"median_abs_diff_pct", s.median_abs_diff_pct},
          {"p90_abs_diff_pct", s.p90_abs_diff_pct},
          {"max_abs_diff_pct", s.max_abs_diff_pct},
          {"mean_signed_diff_pct", s.mean_signed_diff_pct},
          {"workloads", s.workloads},
          {"best_within_3pct_pct", s.best_within_3pct_pct},
          {"best_within_3pct_reverse_pct", s.best_within_3pct_reverse_pct}};
}

std::string repeatability_text(const RepeatabilityStats& s) {
  std::string t = fmt::format(
      "repeatability: {} configurations in both sessions ({} of the first not in the second); |second / first - 1| "
      "median {:.2f}%, p90 {:.2f}%, max {:.1f}%, mean signed {:+.2f}%\n",
      s.matched, s.unmatched, s.median_abs_diff_pct, s.p90_abs_diff_pct, s.max_abs_diff_pct, s.mean_signed_diff_pct);
  t += fmt::format(
      "measured best pick: over {} workloads, the first session's fastest policy is within 3% of the second's "
      "fastest in {:.1f}% (the other way round {:.1f}%): the ceiling of any best-policy pick judged on one session\n",
      s.workloads, s.best_within_3pct_pct, s.best_within_3pct_reverse_pct);
  return t;
}

}  // namespace mlasim::validate
