#pragma once
// A measured timeline beside the simulator's prediction of the same plan, work by work: the error of each work's
// duration and start, the stage-1 tail (last work end minus the median CU end), idle time per CU and the reduce.
// `mlasim report --timeline` prints it; the explorer draws the two timelines and fills its metrics panel from it.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/sim/evaluation.h"
#include "mlasim/validate/error_report.h"
#include "mlasim/validate/measured_timeline.h"

namespace mlasim::validate {

// One work: measured (its workgroups merged: first begin, first KV issue, last end) and predicted.
struct WorkComparison {
  int work = 0;
  int cu = 0;  // where it ran (workgroup 0)
  double measured_begin_us = 0, measured_first_kv_us = 0, measured_end_us = 0;
  double predicted_begin_us = 0, predicted_stream_us = 0, predicted_end_us = 0;
  double duration_error_pct() const;  // + means predicted too slow
  double start_error_us() const;      // predicted begin - measured begin
};

// What one CU (measured) or one timeline row (predicted) did during stage 1.
struct CuActivity {
  int cu = 0;  // CU id (measured), or the place a predicted cluster ran on (a CU, or a pair of them)
  int works = 0;
  double busy_us = 0;  // union of its work intervals
  double end_us = 0;   // its last work's end
};

struct TimelineFacts {
  double stage1_us = 0;         // last stage-1 end
  double reduce_us = 0;         // reduce end - stage-1 end (0 without a reduce)
  double reduce_gap_us = 0;     // reduce start - stage-1 end: the reduce's launch gap (measured: 0 without a
                                // reduce; predicted: stage_gap_us, which the model keeps without a reduce too, and
                                // second_kernel_us with one; both also hold the launch and drain outside the
                                // measured timeline)
  double tail_us = 0;           // last stage-1 end - the median end over CUs that ran work
  double mean_fixed_us = 0;     // mean over works of the fixed part (first KV issue - begin)
  double idle_fraction = 0;     // over every CU of the GPU (or of the plan's clusters): 1 - busy / stage1
  int active_cus = 0;           // CUs (rows) that ran at least one work
  std::vector<CuActivity> cus;  // those, by id
};

struct TimelineComparison {
  std::vector<WorkComparison> works;  // by work index
  TimelineFacts measured, predicted;
  ErrorStats duration;          // per-work duration error
  double start_abs_p50_us = 0;  // |predicted - measured| work start
  double start_abs_p90_us = 0;
  int gpu_cus = 0;  // CUs the idle fraction counts
  // The kernels' event-timed time (the timeline file's, without instrumentation) and the model's kernel_us. The
  // events also hold what no workgroup records: the launch before the first and the drain after the last.
  double measured_kernel_us = 0, predicted_kernel_us = 0;
  double measured_instrumented_kernel_us = 0;  // the event-timed median of the instrumented launches
  // The instrumented launches' event time (else the plain one) less the recorded launch's last workgroup end (0
  // when neither is recorded): the launch and drain no workgroup records, less where the one recorded launch ran
  // slower than the median.
  double measured_outside_us() const;
  double measured_reduce_span_us() const { return measured.reduce_us - measured.reduce_gap_us; }
  double predicted_reduce_span_us() const { return predicted.reduce_us - predicted.reduce_gap_us; }
};

// `prediction` must be the simulator's run of the plan the timeline measured (same works, same indices):
// InputError("timeline", ...) naming the first work the prediction does not hold.
TimelineComparison compare_timelines(const MeasuredTimeline& measured, const sim::Prediction& prediction, int gpu_cus);

// The measured timeline checked against the model: its workload re-planned with its policy (on `gpu`, or the
// workload's own GPU profile when empty), simulated as the kernel class that ran, then compared.
struct TimelineCheck {
  sim::Evaluation evaluation;
  TimelineComparison comparison;
};
TimelineCheck check_measured_timeline(const MeasuredTimeline& measured, const std::string& gpu = "");

nlohmann::ordered_json timeline_comparison_json(const MeasuredTimeline& m, const TimelineCheck& c, bool with_works);
std::string timeline_comparison_text(const MeasuredTimeline& m, const TimelineCheck& c, bool with_works);

}  // namespace mlasim::validate
