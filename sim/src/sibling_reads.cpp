#include "sibling_reads.h"

#include <algorithm>
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

// Reads closer than this are one moment.
double tie(double t) { return 1e-6 * std::max(1.0, std::abs(t)); }

// The share of one read, at `reads[mine]` among the token's `reads` in time order, that comes from memory.
double missed_share(const std::vector<double>& reads, size_t mine, double window_us) {
  for (size_t m = 0; m < reads.size();) {
    size_t e = m + 1;
    while (e < reads.size() && reads[e] - reads[m] <= tie(reads[m])) ++e;
    if (mine < e) {
      const double first = m == 0 ? 1.0 : 1.0 - hit(reads[m] - reads[m - 1], window_us);
      return first / double(e - m);
    }
    m = e;
  }
  return 1.0;
}

}  // namespace

void sibling_l2_shares(const Plan& plan, int requests, std::span<const FluidJobTimes> times, double window_us,
                       SiblingScratch& s, std::vector<double>& share) {
  const int W = plan.num_works();
  const int R = plan.derived.qk_batch_ratio;
  share.assign(static_cast<size_t>(W), 0.0);
  if (R <= 1 || window_us <= 0 || W == 0 || requests <= 0) return;

  // The works that read KV of a request of the batch, ordered by (request, head group, first page): each group's
  // works then lie in one run, their ranges in order.
  const auto reads_kv = [&](const WorkInfo& w) {
    return w.batch_idx >= 0 && plan.request_of(w) < requests && w.kv_end > w.kv_start;
  };
  const auto run_of = [&](const WorkInfo& w) { return plan.request_of(w) * R + plan.head_group_of(w); };
  s.order.clear();
  for (int i = 0; i < W; ++i)
    if (reads_kv(plan.works[i])) s.order.push_back(i);
  std::sort(s.order.begin(), s.order.end(), [&](int a, int b) {
    const WorkInfo &x = plan.works[a], &y = plan.works[b];
    const int rx = run_of(x), ry = run_of(y);
    if (rx != ry) return rx < ry;
    return x.kv_start != y.kv_start ? x.kv_start < y.kv_start : a < b;
  });
  s.runs.assign(static_cast<size_t>(requests) * R + 1, 0);
  for (int i : s.order) ++s.runs[run_of(plan.works[i]) + 1];
  for (size_t k = 1; k < s.runs.size(); ++k) s.runs[k] += s.runs[k - 1];

  // The work of run `run` whose pages hold position x, or -1.
  const auto covering = [&](int run, double x) {
    const auto first = s.order.begin() + s.runs[run], last = s.order.begin() + s.runs[run + 1];
    const auto it = std::upper_bound(first, last, x, [&](double v, int j) { return v < plan.works[j].kv_start; });
    if (it == first) return -1;
    const int j = *(it - 1);
    return x < plan.works[j].kv_end ? j : -1;
  };

  for (int i : s.order) {
    const WorkInfo& w = plan.works[i];
    const FluidJobTimes& tw = times[i];
    if (tw.lane < 0) continue;
    const int first_run = plan.request_of(w) * R, group = plan.head_group_of(w);
    double missed = 0;
    for (int k = 0; k < kSiblingSamples; ++k) {
      const double x = w.kv_start + (k + 0.5) / kSiblingSamples * double(w.kv_end - w.kv_start);
      const double mine = read_time(w, tw, x);
      s.reads.clear();
      for (int g = 0; g < R; ++g) {
        if (g == group) continue;
        const int j = covering(first_run + g, x);
        if (j >= 0 && times[j].lane >= 0) s.reads.push_back(read_time(plan.works[j], times[j], x));
      }
      std::sort(s.reads.begin(), s.reads.end());
      const auto at = std::lower_bound(s.reads.begin(), s.reads.end(), mine);
      const size_t position = static_cast<size_t>(at - s.reads.begin());
      s.reads.insert(at, mine);
      missed += missed_share(s.reads, position, window_us);
    }
    share[i] = 1.0 - missed / kSiblingSamples;
  }
}

}  // namespace mlasim::sim::detail
