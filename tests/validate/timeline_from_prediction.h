#pragma once
// Test support: a measured timeline made from the simulator's own prediction of a plan (each box becomes the run
// of its work on the CU of its row), so the timeline files, the runner and the comparison can be tested where no
// GPU is. Compared with the same prediction, its per-work error is zero by construction.
#include "mlasim/sim/simulator.h"
#include "mlasim/validate/measured_timeline.h"

namespace mlasim::validate::testing {

inline MeasuredTimeline timeline_from_prediction(const sim::Plan& plan, const sim::Prediction& p) {
  MeasuredTimeline t;
  t.kernel = "mla_decode_wgmma_persistent+mla_reduce";
  t.kernel_us = p.metrics.kernel_us;
  t.instrumented_kernel_us = p.metrics.kernel_us * 1.01;
  t.clock_step_ns = 32;
  for (size_t r = 0; r < p.timeline.rows.size(); ++r)
    for (const sim::TimelineBox& b : p.timeline.rows[r])
      t.works.push_back({b.work, 0, static_cast<int>(r), b.begin_us, b.stream_us, b.end_us});
  for (const sim::ReduceBox& b : p.timeline.reduce) t.reduce.push_back({b.block, b.cu, b.begin_us, b.end_us});
  attach_plan_facts(t, plan);
  return t;
}

}  // namespace mlasim::validate::testing
