#pragma once
// The time a kernel trace gives a plan's kernels. The model's kernel_us is fitted mostly to the validation
// campaigns' event timing (MlaRunner::time: an event before stage 1, one between the stages, one after the reduce),
// which holds more than the kernels: on an H100 the interval of a one-kernel plan is 3.5 us longer than its kernel
// in a trace of the same launches (its empty event pair around the absent reduce included), and a plan with a
// reduce 1.2 us longer still (the reduce's launch gap of about 2.4 us, less that empty pair's time;
// scripts/events_vs_trace_probe.py, docs/step.md §3). A trace books the kernels' durations alone and the gaps
// between them apart, so a what-if that scales a trace's kernels compares these device times, not event intervals.
// The H100 and H200 fits also hold 160 split-ratio rows timed around CUDA-graph replays, closer to device time,
// so the subtraction is approximate (docs/step.md §3).
//
//   const DecodeBatch streams = kernel_batch(*e.plan, ctx.batch);  // the batch the kernels run (scope streams)
//   const int k = plan_kernels(*e.plan, streams);                   // stage 1, the reduce, a scope merge
//   double us = trace_device_us(e.prediction->metrics, ctx.params, k);
#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

// Kernels a run of the plan launches: stage 1, the reduce when it has partials, and the scope merge when a token of
// `batch` has more than one stream (a merged two-scope run, docs/sparse.md). `batch` is the batch the kernels run,
// kernel_batch(plan, requested): only it names the streams' tokens.
int plan_kernels(const Plan& plan, const DecodeBatch& batch);

// kernel_us less the event timing's share: events_overhead_us, and events_kernel_overhead_us for each kernel after
// the first (measured with a reduce; a scope merge's third kernel is taken at the same value, unmeasured), never
// below 0. Both 0 (not measured): kernel_us.
double trace_device_us(const Metrics& metrics, const CostParams& params, int kernels);

}  // namespace mlasim::sim
