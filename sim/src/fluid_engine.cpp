#include "fluid_engine.h"

#include <algorithm>
#include <limits>

namespace mlasim::sim::detail {
namespace {

// Where a lane's current job stands when its pending event fires.
enum Phase : unsigned char { kStart, kFixedDone, kStreamDone, kComputeDone };

using Event = EventQueue::Event;

class Engine {
 public:
  Engine(const FluidMachine& m, std::span<const FluidJob> jobs, std::span<const int> task_begin,
         std::span<const int> task_width, std::span<FluidJobTimes> out, FluidScratch& s)
      : m_(m),
        jobs_(jobs),
        task_begin_(task_begin),
        task_width_(task_width),
        out_(out),
        s_(s),
        tasks_(static_cast<int>(task_begin.size()) - 1) {}

  double run(double start_us) {
    now_ = start_us;
    const size_t lanes = static_cast<size_t>(std::min(m_.slots, tasks_));  // never more running tasks
    s_.timed.clear();
    s_.streams.clear();
    s_.next_lane.assign(lanes, -1);
    s_.lane_job.assign(lanes, 0);
    s_.lane_job_end.assign(lanes, 0);
    s_.lane_width.assign(lanes, 0);
    s_.lane_load.assign(lanes, 0.0);
    s_.lane_phase.assign(lanes, kStart);
    s_.free_lanes.clear();
    free_units_ = m_.slots;

    // The first tasks that fit start together on lanes 0, 1, ...; only then may a freed lane take a queued task.
    while (next_task_ < tasks_ && width(next_task_) <= free_units_) assign(next_unused_lane_++);
    const int started = next_unused_lane_;
    for (int lane = 0; lane < started; ++lane) advance(lane, kStart);

    double end = start_us;
    while (!s_.timed.empty() || !s_.streams.empty()) {
      const double rate = streaming_ > 0 ? m_.rate(memory_load_) : 0.0;
      const double t_stream = s_.streams.empty() ? std::numeric_limits<double>::infinity()
                                                 : now_ + std::max(0.0, s_.streams.top_key() - virtual_bytes_) / rate;
      const double t_timed = s_.timed.empty() ? std::numeric_limits<double>::infinity() : s_.timed.top_key();
      const bool stream = t_stream <= t_timed;
      Event e;
      if (stream) {
        e = s_.streams.pop();
        virtual_bytes_ = std::max(virtual_bytes_, e.key);
        now_ = t_stream;
        for (int lane = e.head; lane >= 0; lane = s_.next_lane[lane]) {
          streaming_ -= s_.lane_width[lane];
          memory_load_ -= s_.lane_load[lane];
        }
        if (streaming_ == 0) memory_load_ = 0;  // no rounding left over
      } else {
        e = s_.timed.pop();
        virtual_bytes_ += rate * (t_timed - now_);
        now_ = t_timed;
      }
      // Every lane of the event moves on (lanes of one timed event may wait for different phases); read each
      // link before advance() reuses it.
      for (int lane = e.head; lane >= 0;) {
        const int next = s_.next_lane[lane];
        advance(lane, stream ? kStreamDone : static_cast<Phase>(s_.lane_phase[lane]));
        lane = next;
      }
      end = now_;
    }
    return end;
  }

 private:
  int width(int task) const { return task_width_.empty() ? 1 : std::clamp(task_width_[task], 1, m_.slots); }

  void assign(int lane) {
    const int w = width(next_task_);
    free_units_ -= w;
    s_.lane_width[lane] = w;
    s_.lane_job[lane] = task_begin_[next_task_];
    s_.lane_job_end[lane] = task_begin_[next_task_ + 1];
    ++next_task_;
  }

  int take_lane() {
    if (s_.free_lanes.empty()) return next_unused_lane_++;
    const int lane = s_.free_lanes.back();
    s_.free_lanes.pop_back();
    return lane;
  }

  // The task on `lane` is done: its slots go back, and queued tasks start in order while they fit, the first
  // on this lane. Returns whether this lane got a task.
  bool refill(int lane) {
    free_units_ += s_.lane_width[lane];
    s_.lane_width[lane] = 0;
    bool reused = false;
    while (next_task_ < tasks_ && width(next_task_) <= free_units_) {
      if (!reused) {
        assign(lane);
        reused = true;
      } else {
        const int other = take_lane();
        assign(other);
        advance(other, kStart);
      }
    }
    if (!reused) s_.free_lanes.push_back(lane);
    return reused;
  }

  void wait_until(int lane, double t, Phase then) {
    s_.lane_phase[lane] = then;
    s_.timed.push(t, lane, s_.next_lane);
  }

  // Runs the lane's current job from `phase` at the current time until it has to wait for an event; moves on
  // to the next job of the task, then to the next queued task.
  void advance(int lane, Phase phase) {
    for (;;) {
      const int j = s_.lane_job[lane];
      if (j >= s_.lane_job_end[lane]) {  // the task is done
        if (!refill(lane)) return;
        phase = kStart;
        continue;
      }
      const FluidJob& job = jobs_[j];
      FluidJobTimes& t = out_[j];
      switch (phase) {
        case kStart:
          t.lane = lane;
          t.begin_us = now_;
          if (job.fixed_us > 0) return wait_until(lane, now_ + job.fixed_us, kFixedDone);
          [[fallthrough]];
        case kFixedDone:
          t.stream_us = now_;
          if (job.bytes > 0) {
            s_.lane_phase[lane] = kStreamDone;
            s_.streams.push(virtual_bytes_ + job.bytes, lane, s_.next_lane);
            streaming_ += s_.lane_width[lane];
            s_.lane_load[lane] = s_.lane_width[lane] * job.memory_share;
            memory_load_ += s_.lane_load[lane];
            return;
          }
          [[fallthrough]];
        case kStreamDone: {
          const double end = m_.stream_end(t.stream_us, now_, job.min_stream_us);
          if (end > now_) return wait_until(lane, end, kComputeDone);
          [[fallthrough]];
        }
        case kComputeDone:
          t.end_us = now_;
          s_.lane_job[lane] = j + 1;
          phase = kStart;
      }
    }
  }

  const FluidMachine& m_;
  std::span<const FluidJob> jobs_;
  std::span<const int> task_begin_;
  std::span<const int> task_width_;
  std::span<FluidJobTimes> out_;
  FluidScratch& s_;
  const int tasks_;
  double now_ = 0;
  double virtual_bytes_ = 0;  // bytes one workgroup streaming since the start would have moved by now
  int streaming_ = 0;         // workgroups streaming
  double memory_load_ = 0;    // the same, each counted by its job's memory_share
  int free_units_ = 0;        // free slots
  int next_task_ = 0;
  int next_unused_lane_ = 0;
};

}  // namespace

double run_fluid(const FluidMachine& machine, std::span<const FluidJob> jobs, std::span<const int> task_begin,
                 std::span<const int> task_width, double start_us, std::span<FluidJobTimes> out,
                 FluidScratch& scratch) {
  if (task_begin.size() < 2 || machine.slots <= 0) return start_us;
  return Engine(machine, jobs, task_begin, task_width, out, scratch).run(start_us);
}

}  // namespace mlasim::sim::detail
