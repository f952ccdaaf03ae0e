#pragma once
// A kernel trace cut into decode steps (docs/step.md): each step's kernels in device order, classed by the name
// rules, with the device time each adds to the step (its part not under an earlier kernel) and the idle gap before
// it. A step's time is the span from its first kernel's start to its last kernel's end, and it is exactly the sum
// of those two over its kernels, so an edit that changes one kernel changes the step by as much.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/model/l2_prior_writes.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/step_rules.h"

namespace mlasim::validate {

// The largest batch a step reads from its trace: a workload's largest request count.
constexpr long long kMaxStepBatch = 65536;

struct StepKernel {
  std::string name;
  std::string kernel_class;
  double exposed_us = 0;  // end minus the later of its start and the latest end before it (0 when hidden)
  double gap_us = 0;      // idle time between the latest end before it and its start (0 for a step's first kernel)
  std::optional<OpBytes> bytes;  // what it reads and writes, where the step what-if was told (op_bytes.h)
};

struct DecodeStep {
  int index = 0;  // in the trace, from 0, before skipping
  // The rules' batch_from launch count (requests, or query tokens when it counts tokens); 0: the trace does not say.
  int batch = 0;
  std::vector<StepKernel> kernels;
  double time_us() const;  // Σ exposed + Σ gap
  double gaps_us() const;
  int layers() const;                              // MLA stage-1 kernels: the attention layers the step ran
  std::map<std::string, double> class_us() const;  // exposed time per class (every class of step_classes())
};

struct StepOptions {
  int skip = 0;             // steps left out at the start (warm-up)
  double step_gap_us = 0;   // a trace without markers: a device gap longer than this ends a step; 0 = automatic
  bool use_markers = true;  // steps from the trace's markers when it has them
};

struct StepAnalysis {
  std::string trace;  // origin
  std::string format;
  std::string rules;  // the rule set's name
  std::string split;  // how steps were found: "markers", "gaps > X us", or "whole trace"
  int total_steps = 0;
  std::vector<DecodeStep> steps;  // after skipping
  int kernels = 0;                // kernels read
  int unmarked_kernels = 0;       // kernels no marker covers: each joins the step of the marked kernel before it
  std::string batch_source;       // the rules' batch_from (BatchFromGrid::describe); "" when they have none
  bool batch_counts_tokens = false;
  int steps_with_batch = 0;  // steps whose batch the trace gives
  int batch_refused = 0;     // steps whose count divide_by does not divide, or past kMaxStepBatch
};

// Cuts and classes the trace. Throws InputError("skip", ...) when skipping leaves no step.
StepAnalysis analyse_steps(const KernelTrace& trace, const StepRules& rules, const StepOptions& options);

// Means over the analysis' steps: time, gaps, per-class time, kernels and layers per step.
struct StepSummary {
  double time_us = 0;
  double gaps_us = 0;
  double kernels = 0;
  double layers = 0;
  std::map<std::string, double> class_us;
  double attention_share() const;  // (mla_stage1 + mla_reduce) / time
};
StepSummary summarize(const std::vector<DecodeStep>& steps);

}  // namespace mlasim::validate
