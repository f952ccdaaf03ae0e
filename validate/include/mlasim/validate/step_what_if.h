#pragma once
// Decode-step what-if (docs/step.md): edits applied to the measured steps of a trace. Every kernel an edit does not
// touch keeps its measured time and gap; mlasim predicts only what changes.
//
//   policy=SPEC               the MLA stage 1 + reduce of each layer under another split policy: the measured time
//                             scaled by the model's predicted kernel_us under SPEC over that under the policy that
//                             ran (--policy); a reduce that the new plan no longer needs goes, with its launch gap;
//                             with the ops' bytes, each stage 1 pays the L2 write-back of what the ops before it
//                             left dirty under the new plan in place of the old one's (sim/l2_writeback.h)
//   fuse=SEL[+SEL...][:us=T|:bytes=B[:written=W]]
//                             each run of consecutive kernels that SEL matches becomes one kernel of T us, or a
//                             stream kernel of B bytes, W of them written (stream_kernel_time_us, cost_model.h);
//                             the gaps inside a run go
//   remove=SEL[+SEL...]       those kernels go, with the launch gap before each
//                             (fuse and remove: with the ops' bytes (WhatIfContext::op_bytes), each stage 1 after
//                             takes the change of what the ops before it wrote and read into L2 by the profile's
//                             l2_prior_writes law, model/l2_prior_writes.h, and of the write-back of what they left
//                             dirty, sim/l2_writeback.h; the attention's kernels move their plan's bytes where the
//                             file does not name them, sim/attention_bytes.h)
//   gaps=T                    every gap between kernels of a step becomes T us (graph replay instead of eager
//                             launches, or the reverse)
//   metadata=IMPL             the step's metadata build (its `metadata` kernels, or none) becomes one build of the
//                             plan of the policy the step runs (--policy, or the last policy= edit) by IMPL: host,
//                             device-serial or device-parallel (metadata_cost.h)
//
// SEL is a step class (step_rules.h) or re:REGEX on kernel names (a regex selector stands alone).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/metadata_cost.h"
#include "mlasim/validate/op_bytes.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_batches.h"
#include "mlasim/validate/step_spread.h"

namespace mlasim::validate {

struct StepEdit {
  enum class Kind { policy, fuse, remove, gaps, metadata };
  Kind kind = Kind::remove;
  std::string text;                    // as given
  std::string policy;                  // policy: the spec to run instead; metadata: the implementation
  std::vector<std::string> selectors;  // fuse, remove: class names, or one "re:REGEX"
  std::optional<double> us;            // fuse: the fused kernel's time; gaps: the gap
  std::optional<double> bytes;         // fuse: the bytes the fused kernel moves
  std::optional<double> written;       // fuse: how many of those bytes it writes (the rest it reads)
};

// Parses one --edit; throws InputError("edit", ...) naming what is wrong and the forms allowed.
StepEdit parse_step_edit(const std::string& text);

struct WhatIfContext {
  const sim::WorkloadContext* workload = nullptr;         // the step's batch and the GPU profile
  std::string ran_policy = "aiter-v1";                    // the policy that planned the traced MLA kernels
  const sim::MetadataCostModel* metadata_cost = nullptr;  // metadata= edits: the planners' costs
  const OpBytesRules* op_bytes = nullptr;                 // fuse= and remove= edits: the ops' bytes (--op-bytes)
  // Each step's own batch (--step-batches), one per step of the trace: policy and metadata edits plan it in place of
  // the batch the flags and the launch grids give.
  const StepBatches* step_batches = nullptr;
};

// The metadata build of a policy's plan for the step's batch, by every implementation the model knows.
struct MetadataBuild {
  std::string policy;
  int clusters = 0, works = 0, requests = 0;
  std::vector<std::pair<std::string, double>> us;  // implementation, time
};
MetadataBuild metadata_build(const sim::MetadataCostModel& model, const std::string& policy,
                             const sim::WorkloadContext& workload);

// What a policy edit predicted for one batch the steps ran: the figures its note gives, for tools to read.
struct PolicyChangeFigures {
  std::string edit, ran_policy, next_policy;  // the edit as given; the policy the steps ran; the one it puts in
  int requests = 0;                           // the batch's requests
  std::string batch;                          // the batch, as the edit's line names it ("16 requests", ...)
  double ran_us = 0, next_us = 0;             // each plan's kernels as a trace times them
  double ratio() const { return ran_us > 0 ? next_us / ran_us : 0.0; }
  // The share of the ratio's carry of the measured attention's excess over ran_us that the new attention takes
  // (the ran plan's class's policy_offset_carry): 1, the measured attention times the ratio; 0, next_us.
  double offset_carry = 1;
  std::string ran_class;     // the kernel class of the plan that ran, whose policy_offset_carry that is
  bool carry_known = false;  // whether the profile measured the L2 carry-over (else the next figures are 0)
  double dirty_ran_mb = 0, dirty_next_mb = 0;    // what each plan leaves dirty in L2 when it ends
  double missed_ran_mb = 0, missed_next_mb = 0;  // partials each plan's reduce reads after stage 1 pushed them out
  double carry_us = 0;                           // the kernel after the attention: its change of time
  // The ratio error over sessions no fit took as input (Gpu::ratio_error) of the plans' kernel class, the larger
  // where the two plans run different classes; 0 pairs where it does not apply: a class without one, steps of more
  // than one query token, or the same plan under another spec.
  std::string kernel_class;
  double ratio_p90_pct = 0;
  int ratio_pairs = 0;
};

struct StepWhatIf {
  std::vector<DecodeStep> before, after;
  StepSummary before_summary, after_summary;
  std::vector<std::string> notes;                   // per edit, what it did (one line each)
  std::vector<PolicyChangeFigures> policy_changes;  // per policy edit and batch, in edit order
  // Half the 90 % band of the edited mean step time, the mean over the steps of two parts added:
  // - the policy edits': each step's attention as the last policy edit left it, where its plan is no longer the one
  //   that ran, times the p90 of the two plans' ratio error over sessions no fit took as input (Gpu::ratio_error,
  //   the larger class's);
  // - the fuse (by bytes) and remove edits': each fused run and removed kernel times the p90 of that kind's measured
  //   error per site over the validation runs (Gpu::edit_error), where it was measured: with the ops' bytes given, at
  //   one query token per request.
  // nullopt where neither part applies, where a policy edit's part is unknown (a class has no ratio error, the steps
  // run more than one query token per request; where every step runs the plan that ran it is zero), or where no
  // fuse or remove edit that ran has an error measured (band_basis says which). Gap and metadata edits, fuses given
  // by time and kinds without a measured error are not in it (unbanded_edits).
  std::optional<double> band_us;
  std::vector<double> band_per_step_us;  // each step's half width (0 where nothing banded changed it)
  std::string band_basis;
  std::vector<std::string> unbanded_edits;                      // the edits that ran whose errors are not in the band
  bool other_edits() const { return !unbanded_edits.empty(); }  // some edit's error is not in the band
  double tokens_per_step = 0;      // query tokens per step, the mean over the steps' batches
  std::vector<int> step_requests;  // the requests each step ran (from the trace, else the flags'); empty: no workload
  std::vector<long long> step_kv_tokens;  // and their KV tokens (the step batches', else the flags' contexts)
  StepSpread measured_spread;             // the measured steps' spread about each batch's mean (step_spread.h)
  double speedup() const;                 // before step time / after step time
  // The edited mean step's band, low (at least 0) and high end: what the text, JSON and explorer print.
  std::optional<std::pair<double, double>> band_range() const;
};

// Applies the edits in order to every step. Throws InputError("edit", ...) for an edit that needs what is not
// there (a policy edit without an MLA stage-1 kernel in the trace, bytes without a GPU profile).
StepWhatIf apply_step_edits(const StepAnalysis& analysis, const std::vector<StepEdit>& edits,
                            const WhatIfContext& context);

}  // namespace mlasim::validate
