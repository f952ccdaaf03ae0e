#pragma once
// A measured per-CU timeline: when each work of a plan ran, on which CU (SM), as our instrumented kernels record
// it (`mlasim validate --timeline DIR`), with the workload and policy that made the plan. It is stored as
// Chrome-trace JSON: complete ("X") events in `traceEvents`, stage 1 and the reduce as two processes with one
// track per CU, the plan's work index, request, KV range and partial flag in each event's args, and mlasim's own
// facts under `otherData.mlasim`. Perfetto and chrome://tracing open the file; the explorer and
// `mlasim report --timeline` read it back with load_measured_timeline().
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/sim/plan.h"
#include "mlasim/sim/workload.h"

namespace mlasim::validate {

// One workgroup's run of one work. Times are microseconds from the earliest stage-1 workgroup start.
struct MeasuredWork {
  int work = 0;       // index into the plan's works
  int workgroup = 0;  // its workgroup in the cluster: 0, or 0..1 where a cluster is a pair of SMs
  int cu = 0;         // the SM (CU) it ran on
  double begin_us = 0;
  double first_kv_us = 0;  // end of the fixed part: the work's first KV tile issued (begin <= first_kv <= end)
  double end_us = 0;
  // The SM's own clock counted from begin to end (0: not recorded); over end - begin it is the clock the SM ran
  // at, which the power limit lowers when many SMs compute at once.
  uint64_t sm_cycles = 0;
  // From the plan, so the file reads on its own.
  int request = 0;
  int kv_start = 0;  // page range
  int kv_end = 0;
  bool partial = false;
};

// One reduce workgroup's run, on the same clock.
struct MeasuredReduceBlock {
  int block = 0;  // in launch order
  int cu = 0;
  double begin_us = 0;
  double end_us = 0;
  uint64_t sm_cycles = 0;  // as MeasuredWork's
};

struct MeasuredTimeline {
  sim::Workload workload;  // with its GPU profile name
  std::string policy;      // the canonical spec that made the plan
  std::string kernel;      // what ran: "mla_decode_wgmma_persistent+mla_reduce"
  std::string config_id;   // the campaign configuration, when a campaign recorded it
  std::string device;      // "NVIDIA H100 80GB HBM3"
  std::string driver;
  std::optional<int> sm_clock_mhz;
  std::string commit, date, command;
  double kernel_us = 0;               // event-timed median of the same launch without instrumentation
  double instrumented_kernel_us = 0;  // ... and with it: their ratio is the instrumentation's overhead
  double clock_step_ns = 0;           // the smallest nonzero step between two stamps (the timer's resolution)
  std::vector<MeasuredWork> works;    // stage 1, sorted by (cu, begin)
  std::vector<MeasuredReduceBlock> reduce;

  double stage1_end_us() const;  // the last stage-1 workgroup's end
  double end_us() const;         // the last workgroup's end, stage 1 or reduce
  double overhead_pct() const;   // instrumented over plain kernel time, - 1 (0 when either is unknown)
};

// Fills each work's request, KV range and partial flag from the plan; InputError("timeline", ...) when a work
// index is outside the plan.
void attach_plan_facts(MeasuredTimeline& t, const sim::Plan& plan);

nlohmann::ordered_json measured_timeline_to_json(const MeasuredTimeline& t);
// Every error names the field by its path ("traceEvents[3].dur: must be >= 0") as an InputError("timeline", ...).
MeasuredTimeline measured_timeline_from_json(const nlohmann::json& j);
// A file read whole, plain or gzip-compressed; errors: InputError("timeline", "PATH: ...").
MeasuredTimeline load_measured_timeline(const std::string& path);
// Whether `j` looks like a measured timeline (a Chrome trace carrying otherData.mlasim), not a scenario.
bool is_measured_timeline(const nlohmann::json& j);

}  // namespace mlasim::validate
