#pragma once
// The event-driven fluid processor-sharing engine behind the simulator (docs/model.md §3).
// Workgroups ("tasks") run sequences of jobs on slots; every job has a fixed part, then a streaming part that
// advances at the bandwidth share min(beta, bandwidth / k) of the k jobs streaming at that moment, and that
// may not end sooner than its compute floor. Events: a fixed part ends, a stream completes, a compute floor is
// reached. Streams share one rate, so they are ordered by a virtual-byte finish tag: O(jobs log slots).
#include <span>
#include <vector>

namespace mlasim::sim::detail {

struct FluidJob {
  double fixed_us = 0;       // latency-bound part (prologue, Q load, epilogue, block launch)
  double bytes = 0;          // bytes streamed through the memory system
  double min_stream_us = 0;  // compute floor of the streaming part (flops / matrix rate)
};

struct FluidJobTimes {
  double begin_us = 0;
  double stream_us = 0;  // fixed part done
  double end_us = 0;
  int slot = -1;         // slot the job ran on (-1: never ran)
};

struct FluidMachine {
  int slots = 0;             // workgroup slots (clusters, or CUs x occupancy)
  double beta = 0;           // bytes per us one streaming job reaches alone
  double bandwidth = 0;      // bytes per us shared by all streaming jobs
};

// Reusable buffers, so a simulation allocates nothing once warm.
struct FluidScratch {
  struct Event {
    double key;  // absolute time (timed events) or virtual-byte tag (streams)
    int slot;
  };
  std::vector<Event> timed;
  std::vector<Event> streams;
  std::vector<int> slot_job;      // current job of each slot (-1: idle)
  std::vector<int> slot_job_end;  // end of the current task's jobs
  std::vector<unsigned char> slot_phase;
};

// Runs tasks in launch order: task t owns jobs [task_begin[t], task_begin[t+1]) and runs them back to back.
// Tasks 0..slots-1 start at `start_us` on slots 0..slots-1; each later task takes the slot that frees first
// (equal times: the lower slot). A task without jobs ends at once. Writes `out[j]` for every job and returns
// the time the last job ends (start_us when there is none).
double run_fluid(const FluidMachine& machine, std::span<const FluidJob> jobs, std::span<const int> task_begin,
                 double start_us, std::span<FluidJobTimes> out, FluidScratch& scratch);

}  // namespace mlasim::sim::detail
