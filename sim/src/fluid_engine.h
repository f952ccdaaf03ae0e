#pragma once
// The event-driven fluid processor-sharing engine behind the simulator (docs/model.md §3).
// Workgroups ("tasks") run sequences of jobs; every job has a fixed part, then a streaming part that advances
// at the bandwidth share min(beta, bandwidth / k) of the k workgroups streaming at that moment, and that may not
// end sooner than its compute floor. Events: a fixed part ends, a stream completes, a compute floor is reached.
// Streams share one rate, so they are ordered by a virtual-byte finish tag: O(jobs log lanes), no time steps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace mlasim::sim::detail {

struct FluidJob {
  double fixed_us = 0;       // latency-bound part (prologue, Q load, epilogue, block launch)
  double bytes = 0;          // bytes each workgroup of the task streams through the memory system
  double min_stream_us = 0;  // compute floor of the streaming part (flops / matrix rate)
  // Share of the bytes that come from memory and so load the shared bandwidth; the rest is served by the L2 and
  // costs only the workgroup's own stream.
  double memory_share = 1;
};

struct FluidJobTimes {
  double begin_us = 0;
  double stream_us = 0;  // fixed part done
  double end_us = 0;
  int lane = -1;  // lane the job's task ran on (-1: never ran)
};

struct FluidMachine {
  int slots = 0;         // workgroup slots (clusters, or CUs x occupancy)
  double beta = 0;       // bytes per us one streaming workgroup reaches alone
  double bandwidth = 0;  // bytes per us all streaming workgroups together approach at saturation
  double knee = 0;       // sharpness n of the saturation curve; 0: the sharp limit min(beta, bandwidth / k)
  double overlap = 0;    // n of a job's streaming part (m^n + c^n)^(1/n) (m: its bytes' time, c: its floor); 0: max

  // Bytes per us each streaming workgroup moves while the streaming workgroups load the memory as `k` would that
  // read everything from it: beta / (1 + (k beta / bandwidth)^n)^(1/n), the curve the streaming-read sweep
  // measures (docs/model.md §3); k counts each workgroup by its job's memory_share (k <= 0, every streaming
  // workgroup served by the L2: beta).
  double rate(double k) const;
  // When a streaming part that started at `begin`, moved its bytes by `streamed` and has a compute floor
  // `floor_us` ends.
  double stream_end(double begin, double streamed, double floor_us) const;
};

inline double FluidMachine::rate(double k) const {
  if (k <= 0) return beta;
  if (knee <= 0) return std::min(beta, bandwidth / k);
  return beta / std::pow(1.0 + std::pow(k * beta / bandwidth, knee), 1.0 / knee);
}

inline double FluidMachine::stream_end(double begin, double streamed, double floor_us) const {
  const double m = streamed - begin;
  if (overlap <= 0 || floor_us <= 0 || m <= 0) return begin + std::max(m, floor_us);
  // Scaled by the larger term so that large n cannot overflow.
  const double big = std::max(m, floor_us);
  return begin + big * std::pow(std::pow(m / big, overlap) + std::pow(floor_us / big, overlap), 1.0 / overlap);
}

// Pending events ordered by key (a time, or a virtual-byte tag for streams). Lanes pushed one after another
// under an equal key share one event, so lanes moving in lockstep (equal works) cost one queue operation.
// Events pushed in non-decreasing key order (the common case: equal fixed costs) go to a FIFO, the rest to a heap.
class EventQueue {
 public:
  struct Event {
    double key;
    int head;   // first lane; the others follow through next_lane
    int count;  // lanes in the event
  };
  void clear();
  bool empty() const { return !open_ && fifo_read_ == fifo_.size() && heap_.empty(); }
  double top_key();
  // Adds `lane` under `key`; next_lane links the lanes of one event.
  void push(double key, int lane, std::vector<int>& next_lane);
  Event pop();

 private:
  // Min-heap order on the key: std heaps are max-heaps, so "later" compares as less.
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.key > b.key; }
  };
  void commit();  // files the event still open for merging

  Event open_event_{};
  int open_tail_ = -1;
  bool open_ = false;
  std::vector<Event> fifo_;
  size_t fifo_read_ = 0;
  std::vector<Event> heap_;
};

inline void EventQueue::clear() {
  open_ = false;
  fifo_.clear();
  fifo_read_ = 0;
  heap_.clear();
}

inline void EventQueue::commit() {
  if (!open_) return;
  open_ = false;
  if (fifo_read_ == fifo_.size()) {
    fifo_.clear();
    fifo_read_ = 0;
  }
  if (fifo_.size() == fifo_read_ || open_event_.key >= fifo_.back().key) {
    fifo_.push_back(open_event_);
  } else {
    heap_.push_back(open_event_);
    std::push_heap(heap_.begin(), heap_.end(), EventQueue::Later{});
  }
}

inline double EventQueue::top_key() {
  commit();
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double f = fifo_read_ < fifo_.size() ? fifo_[fifo_read_].key : inf;
  const double h = heap_.empty() ? inf : heap_.front().key;
  return std::min(f, h);
}

inline void EventQueue::push(double key, int lane, std::vector<int>& next_lane) {
  next_lane[lane] = -1;
  if (open_ && key == open_event_.key) {
    next_lane[open_tail_] = lane;
    open_tail_ = lane;
    ++open_event_.count;
    return;
  }
  commit();
  open_event_ = {key, lane, 1};
  open_tail_ = lane;
  open_ = true;
}

inline EventQueue::Event EventQueue::pop() {
  commit();
  if (fifo_read_ < fifo_.size() && (heap_.empty() || fifo_[fifo_read_].key <= heap_.front().key))
    return fifo_[fifo_read_++];
  std::pop_heap(heap_.begin(), heap_.end(), EventQueue::Later{});
  const Event e = heap_.back();
  heap_.pop_back();
  return e;
}

// Reusable buffers, so a simulation allocates nothing once warm.
struct FluidScratch {
  EventQueue timed;
  EventQueue streams;
  std::vector<int> next_lane;     // links of the lanes sharing an event
  std::vector<int> lane_job;      // current job of each lane
  std::vector<int> lane_job_end;  // end of the current task's jobs
  std::vector<int> lane_width;    // workgroups of the task on each lane
  std::vector<double> lane_load;  // memory load of each streaming lane: its workgroups times its job's memory_share
  std::vector<int> free_lanes;
  std::vector<unsigned char> lane_phase;
};

// Runs tasks in launch order: task t owns jobs [task_begin[t], task_begin[t+1]) and runs them back to back on
// `task_width[t]` workgroups side by side (identical workgroups in lockstep; empty span = 1 each), each using
// one slot and streaming its own bytes. Tasks start in order while their workgroups fit in the free slots (the
// dispatcher is in order: a task that does not fit holds back the ones after it). Lanes number the running
// tasks: with width 1 and at most `slots` tasks, task t runs on lane t, and a later task reuses the lane of the
// task whose end let it start. A task without jobs ends at once. Writes `out[j]` for every job and returns the
// time the last job ends (start_us when there is none).
double run_fluid(const FluidMachine& machine, std::span<const FluidJob> jobs, std::span<const int> task_begin,
                 std::span<const int> task_width, double start_us, std::span<FluidJobTimes> out, FluidScratch& scratch);

}  // namespace mlasim::sim::detail
