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

L2Dirty l2_dirty(const Plan& plan, const Timeline& timeline, const DecodeBatch& batch, const L2Carry& carry) {
  L2Dirty d;
  if (!carry.known()) return d;
  const int heads = attention_row_heads(plan, batch);
  struct Write {
    double at, bytes;
    bool partial;
  };
  std::vector<Write> writes;
  TrafficBefore traffic;
  for (const auto& row : timeline.rows)
    for (const TimelineBox& box : row) {
      if (box.work < 0 || box.work >= plan.num_works()) continue;
      const WorkInfo& w = plan.works[static_cast<size_t>(box.work)];
      const double out = work_output_bytes(w, heads);
      traffic.add_stream(box.stream_us, box.end_us, work_kv_bytes(w, batch));
      traffic.add_write(box.end_us, out);
      writes.push_back({box.end_us, out, w.is_partial()});
    }
  std::sort(writes.begin(), writes.end(), [](const Write& a, const Write& b) { return a.at < b.at; });
  traffic.start();
  const double cap = carry.cap_mb * kMB;
  double written = 0, surviving = 0, surviving_partials = 0, partials = 0;
  for (const Write& w : writes) {
    written += w.bytes;
    if (w.partial) partials += w.bytes;
    // Written with less than the cap of traffic after it: still in L2, dirty.
    if (traffic.total() - traffic.at(w.at) < cap) {
      surviving += w.bytes;
      if (w.partial) surviving_partials += w.bytes;
    }
  }
  const double dirty = std::min(surviving, cap);
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
