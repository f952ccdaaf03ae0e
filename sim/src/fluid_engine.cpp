#include "fluid_engine.h"

#include <algorithm>
#include <limits>

namespace mlasim::sim::detail {
namespace {

using Event = FluidScratch::Event;

// Min-heap order on (key, slot): std heaps are max-heaps, so "later" compares as less.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.key > b.key || (a.key == b.key && a.slot > b.slot);
  }
};

// Where a slot's current job stands when its pending event fires.
enum Phase : unsigned char { kStart, kFixedDone, kStreamDone, kComputeDone };

class Engine {
 public:
  Engine(const FluidMachine& m, std::span<const FluidJob> jobs, std::span<const int> task_begin,
         std::span<FluidJobTimes> out, FluidScratch& s)
      : m_(m), jobs_(jobs), task_begin_(task_begin), out_(out), s_(s) {}

  double run(double start_us) {
    now_ = start_us;
    const int tasks = static_cast<int>(task_begin_.size()) - 1;
    const int slots = m_.slots;
    s_.timed.clear();
    s_.streams.clear();
    s_.slot_job.assign(static_cast<size_t>(slots), -1);
    s_.slot_job_end.assign(static_cast<size_t>(slots), 0);
    s_.slot_phase.assign(static_cast<size_t>(slots), kStart);

    // Tasks 0..slots-1 take slots 0..slots-1 first; only then may an idle slot take a queued task.
    const int first = std::min(tasks, slots);
    for (int s = 0; s < first; ++s) {
      s_.slot_job[s] = task_begin_[s];
      s_.slot_job_end[s] = task_begin_[s + 1];
    }
    next_task_ = first;
    for (int s = 0; s < first; ++s) advance(s, kStart);

    double end = start_us;
    constexpr double inf = std::numeric_limits<double>::infinity();
    while (!s_.timed.empty() || !s_.streams.empty()) {
      const double rate = streaming_ > 0 ? std::min(m_.beta, m_.bandwidth / streaming_) : 0.0;
      const double t_stream =
          s_.streams.empty() ? inf : now_ + std::max(0.0, s_.streams.front().key - virtual_bytes_) / rate;
      const double t_timed = s_.timed.empty() ? inf : s_.timed.front().key;
      if (t_stream <= t_timed) {
        std::pop_heap(s_.streams.begin(), s_.streams.end(), Later{});
        const Event e = s_.streams.back();
        s_.streams.pop_back();
        virtual_bytes_ = std::max(virtual_bytes_, e.key);
        now_ = t_stream;
        --streaming_;
        advance(e.slot, kStreamDone);
      } else {
        std::pop_heap(s_.timed.begin(), s_.timed.end(), Later{});
        const Event e = s_.timed.back();
        s_.timed.pop_back();
        virtual_bytes_ += rate * (t_timed - now_);
        now_ = t_timed;
        advance(e.slot, static_cast<Phase>(s_.slot_phase[e.slot]));
      }
      end = now_;
    }
    return end;
  }

 private:
  void wait_until(int slot, double t, Phase then) {
    s_.slot_phase[slot] = then;
    s_.timed.push_back({t, slot});
    std::push_heap(s_.timed.begin(), s_.timed.end(), Later{});
  }

  // Runs the slot's current job from `phase` at the current time until it has to wait for an event; moves on
  // to the next job of the task, then to the next queued task.
  void advance(int slot, Phase phase) {
    for (;;) {
      int j = s_.slot_job[slot];
      if (j >= s_.slot_job_end[slot]) {  // the task has no (more) jobs: take the next queued one
        if (!take_next_task(slot)) return;
        j = s_.slot_job[slot];
        phase = kStart;
        if (j >= s_.slot_job_end[slot]) continue;
      }
      const FluidJob& job = jobs_[j];
      FluidJobTimes& t = out_[j];
      switch (phase) {
        case kStart:
          t.slot = slot;
          t.begin_us = now_;
          if (job.fixed_us > 0) return wait_until(slot, now_ + job.fixed_us, kFixedDone);
          [[fallthrough]];
        case kFixedDone:
          t.stream_us = now_;
          if (job.bytes > 0) {
            s_.slot_phase[slot] = kStreamDone;
            s_.streams.push_back({virtual_bytes_ + job.bytes, slot});
            std::push_heap(s_.streams.begin(), s_.streams.end(), Later{});
            ++streaming_;
            return;
          }
          [[fallthrough]];
        case kStreamDone:
          if (t.stream_us + job.min_stream_us > now_)
            return wait_until(slot, t.stream_us + job.min_stream_us, kComputeDone);
          [[fallthrough]];
        case kComputeDone:
          t.end_us = now_;
          s_.slot_job[slot] = j + 1;
          phase = kStart;
      }
    }
  }

  bool take_next_task(int slot) {
    const int tasks = static_cast<int>(task_begin_.size()) - 1;
    if (next_task_ >= tasks) {
      s_.slot_job[slot] = s_.slot_job_end[slot];
      return false;
    }
    s_.slot_job[slot] = task_begin_[next_task_];
    s_.slot_job_end[slot] = task_begin_[next_task_ + 1];
    ++next_task_;
    return true;
  }

  const FluidMachine& m_;
  std::span<const FluidJob> jobs_;
  std::span<const int> task_begin_;
  std::span<FluidJobTimes> out_;
  FluidScratch& s_;
  double now_ = 0;
  double virtual_bytes_ = 0;  // bytes one job streaming since the start would have moved by now
  int streaming_ = 0;
  int next_task_ = 0;
};

}  // namespace

double run_fluid(const FluidMachine& machine, std::span<const FluidJob> jobs, std::span<const int> task_begin,
                 double start_us, std::span<FluidJobTimes> out, FluidScratch& scratch) {
  if (task_begin.size() < 2 || machine.slots <= 0) return start_us;
  return Engine(machine, jobs, task_begin, out, scratch).run(start_us);
}

}  // namespace mlasim::sim::detail
