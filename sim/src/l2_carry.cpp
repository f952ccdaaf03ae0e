#include "mlasim/sim/l2_carry.h"

#include <algorithm>
#include <vector>

#include "mlasim/sim/attention_bytes.h"

namespace mlasim::sim {
namespace {

constexpr double kMB = 1e6;

// Bytes the run moves through L2 before time t: each KV segment streams evenly over [begin, end], each write lands
// whole at its time. Answered for ascending t in one sweep.
class TrafficBefore {
 public:
  void add_stream(double begin, double end, double bytes) {
    if (bytes <= 0) return;
    if (end > begin) {
      events_.push_back({begin, bytes / (end - begin), 0});
      events_.push_back({end, -bytes / (end - begin), 0});
    } else {
      events_.push_back({end, 0, bytes});
    }
    total_ += bytes;
  }
  void add_write(double at, double bytes) {
    events_.push_back({at, 0, bytes});
    total_ += bytes;
  }
  double total() const { return total_; }
  void start() {
    std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
    next_ = 0;
    slope_ = value_ = last_ = 0;
  }
  // Traffic up to and including time t (writes at t count as before it); t must not decrease between calls.
  double at(double t) {
    for (; next_ < events_.size() && events_[next_].at <= t; ++next_) {
      const Event& e = events_[next_];
      value_ += slope_ * (e.at - last_) + e.jump;
      slope_ += e.slope;
      last_ = e.at;
    }
    return value_ + slope_ * (t - last_);
  }

 private:
  struct Event {
    double at, slope, jump;
  };
  std::vector<Event> events_;
  size_t next_ = 0;
  double slope_ = 0, value_ = 0, last_ = 0, total_ = 0;
};

}  // namespace

L2Carry l2_carry_of(const CostParams& params) {
  const L2Carry c{params.l2_carry_us_per_mb, params.l2_carry_cap_mb, params.l2_carry_reread_evict};
  return c.known() ? c : L2Carry{};
}

void l2_resident_outputs(const Plan& plan, const DecodeBatch& batch, std::span<const WorkWindow> windows, double cap_mb,
                         std::vector<char>& resident) {
  const int heads = attention_row_heads(plan, batch);
  const auto valid = [&](const WorkWindow& w) { return w.work >= 0 && w.work < plan.num_works(); };
  TrafficBefore traffic;
  for (const WorkWindow& w : windows) {
    if (!valid(w)) continue;
    const WorkInfo& info = plan.works[static_cast<size_t>(w.work)];
    traffic.add_stream(w.stream_us, w.end_us, work_kv_bytes(info, batch));
    traffic.add_write(w.end_us, work_output_bytes(info, heads));
  }
  // Asked in time order, as the sweep needs.
  std::vector<size_t> order(windows.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return windows[a].end_us < windows[b].end_us; });
  traffic.start();
  const double cap = cap_mb * kMB;
  resident.assign(windows.size(), 0);
  for (size_t k : order)
    if (valid(windows[k])) resident[k] = traffic.total() - traffic.at(windows[k].end_us) < cap;
}

L2Dirty l2_dirty(const Plan& plan, const Timeline& timeline, const DecodeBatch& batch, const L2Carry& carry) {
  L2Dirty d;
  if (!carry.known()) return d;
  const int heads = attention_row_heads(plan, batch);
  std::vector<WorkWindow> windows;
  for (const auto& row : timeline.rows)
    for (const TimelineBox& box : row)
      if (box.work >= 0 && box.work < plan.num_works()) windows.push_back({box.work, box.stream_us, box.end_us});
  std::vector<char> in_l2;
  l2_resident_outputs(plan, batch, windows, carry.cap_mb, in_l2);
  double written = 0, surviving = 0, surviving_partials = 0, partials = 0;
  for (size_t k = 0; k < windows.size(); ++k) {
    const WorkInfo& w = plan.works[static_cast<size_t>(windows[k].work)];
    const double out = work_output_bytes(w, heads);
    written += out;
    if (w.is_partial()) partials += out;
    if (in_l2[k]) {
      surviving += out;
      if (w.is_partial()) surviving_partials += out;
    }
  }
  const double dirty = std::min(surviving, carry.cap_mb * kMB);
  d.stage1_written_mb = written / kMB;
  d.stage1_dirty_mb = dirty / kMB;
  d.end_dirty_mb = d.stage1_dirty_mb;
  if (plan.num_partials() == 0 || partials <= 0) return d;
  // The reduce reads every partial back; those no longer in L2 come in clean and push dirty lines out.
  const double resident = surviving > 0 ? surviving_partials * dirty / surviving : 0.0;
  d.reread_missed_mb = (partials - resident) / kMB;
  d.reduce_written_mb = attention_bytes(plan, batch).reduce_written_mb;
  d.end_dirty_mb = std::min(
      carry.cap_mb, std::max(0.0, d.stage1_dirty_mb - carry.reread_evict * d.reread_missed_mb) + d.reduce_written_mb);
  return d;
}

}  // namespace mlasim::sim
