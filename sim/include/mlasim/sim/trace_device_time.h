#pragma once
// The time a kernel trace gives a plan's kernels. The model's kernel_us is fitted to the validation campaigns'
// event interval (MlaRunner::time: an event before stage 1 and after the reduce), which holds more than the kernels:
// on an H100 the interval of a one-kernel plan is 3.5 us longer than its kernel in a trace of the same launches, and
// each further kernel adds its launch gap (scripts/events_vs_trace_probe.py, docs/step.md §3). A trace books the
// kernels' durations alone and the gaps between them apart, so a what-if that scales a trace's kernels compares
// these device times, not event intervals.
//
//   const int k = plan_kernels(*e.plan, ctx.batch);          // stage 1, the reduce, a scope merge
//   double us = trace_device_us(e.prediction->metrics, ctx.params, k);
#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

// Kernels a run of the plan launches: stage 1, the reduce when it has partials, and the scope merge when a token of
// `batch` has more than one stream (a merged two-scope run, docs/sparse.md).
int plan_kernels(const Plan& plan, const DecodeBatch& batch);

// kernel_us less the event timing's share: events_overhead_us, and events_kernel_overhead_us for each kernel after
// the first, never below 0. Both 0 (not measured): kernel_us.
double trace_device_us(const Metrics& metrics, const CostParams& params, int kernels);

}  // namespace mlasim::sim
