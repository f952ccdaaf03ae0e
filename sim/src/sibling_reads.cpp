#include "sibling_reads.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace mlasim::sim::detail {
namespace {

// When a work that streams its pages [kv_start, kv_end) over [stream_us, end_us] reads page position x.
double read_time(const WorkInfo& w, const FluidJobTimes& t, double x) {
  const double pages = double(w.kv_end - w.kv_start);
  return t.stream_us + (x - w.kv_start) / pages * (t.end_us - t.stream_us);
}

// The chance that a read `lag` us after the latest earlier read of the same token hits the L2.
double hit(double lag, double window_us) {
  const double r = lag / window_us, r2 = r * r;
  return 1.0 / (1.0 + r2 * r2);
}

// At most this many groups read one token (a plan folds at most 128 heads into groups of 16 or more).
constexpr int kMaxReaders = 16;

}  // namespace

void sibling_l2_shares(const Plan& plan, std::span<const FluidJobTimes> times, double window_us,
                       std::vector<double>& share, std::vector<int>& order, std::vector<int>& group_runs) {
  const int W = plan.num_works();
  const int R = plan.derived.qk_batch_ratio;
  share.assign(static_cast<size_t>(W), 0.0);
  if (R <= 1 || R > kMaxReaders || window_us <= 0 || W == 0) return;

  // Works ordered by (request, head group, first page): each group's works then lie in a run, their ranges in order.
  const auto request = [&](const WorkInfo& w) { return std::max(plan.request_of(w), 0); };
  order.resize(static_cast<size_t>(W));
  for (int i = 0; i < W; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const WorkInfo &x = plan.works[a], &y = plan.works[b];
    const int rx = request(x), ry = request(y);
    if (rx != ry) return rx < ry;
    const int gx = plan.head_group_of(x), gy = plan.head_group_of(y);
    if (gx != gy) return gx < gy;
    return x.kv_start != y.kv_start ? x.kv_start < y.kv_start : a < b;
  });
  // run_begin[r * R + g] .. run_begin[r * R + g + 1]: the works of request r's group g in `order`.
  const int requests = request(plan.works[order[W - 1]]) + 1;
  std::vector<int>& run_begin = group_runs;
  run_begin.assign(static_cast<size_t>(requests) * R + 1, 0);
  for (int i = 0; i < W; ++i) ++run_begin[request(plan.works[i]) * R + plan.head_group_of(plan.works[i]) + 1];
  for (size_t k = 1; k < run_begin.size(); ++k) run_begin[k] += run_begin[k - 1];

  // The work of run [b, e) whose pages hold position x, or -1.
  const auto covering = [&](int b, int e, double x) {
    const auto it = std::upper_bound(order.begin() + b, order.begin() + e, x,
                                     [&](double v, int j) { return v < plan.works[j].kv_start; });
    if (it == order.begin() + b) return -1;
    const int j = *(it - 1);
    return x < plan.works[j].kv_end ? j : -1;
  };

  // The reads of one sampled token by the request's groups, in time order: the first misses, each later one
  // misses 1 - hit(gap to the one before); reads at the same moment split their misses evenly.
  std::array<double, kMaxReaders> at{};
  for (int i = 0; i < W; ++i) {
    const WorkInfo& w = plan.works[i];
    const FluidJobTimes& tw = times[i];
    if (w.kv_end <= w.kv_start || tw.lane < 0) continue;
    const int r = request(w), group = plan.head_group_of(w);
    double missed = 0;
    for (int k = 0; k < kSiblingSamples; ++k) {
      const double x = w.kv_start + (k + 0.5) / kSiblingSamples * double(w.kv_end - w.kv_start);
      const double mine = read_time(w, tw, x);
      int n = 0;
      at[n++] = mine;
      for (int g = 0; g < R; ++g) {
        if (g == group) continue;
        const int j = covering(run_begin[r * R + g], run_begin[r * R + g + 1], x);
        if (j >= 0 && times[j].lane >= 0) at[n++] = read_time(plan.works[j], times[j], x);
      }
      std::sort(at.begin(), at.begin() + n);
      // Walk the moments in order; the one holding `mine` gives this work its even part of the moment's misses.
      for (int m = 0; m < n;) {
        const double tie = 1e-6 * std::max(1.0, std::abs(at[m]));
        int e = m + 1;
        while (e < n && at[e] - at[m] <= tie) ++e;
        const double first = m == 0 ? 1.0 : 1.0 - hit(at[m] - at[m - 1], window_us);
        if (mine >= at[m] - tie && mine <= at[e - 1] + tie) {
          missed += first / (e - m);
          break;
        }
        m = e;
      }
    }
    share[i] = 1.0 - missed / kSiblingSamples;
  }
}

}  // namespace mlasim::sim::detail
