#pragma once
// The one evaluation path: a policy plans a workload and the simulator plays the plan with the GPU profile's
// cost parameters. The CLI (plan, predict, compare, sweep), the explorer and validation all go through here.
// Results are immutable and shared, so views and worker threads can hold them without copies or locks.
//
//   const WorkloadContext ctx = resolve(workload);        // batch, GPU profile, cost parameters; checked once
//   const Evaluation e = evaluate("aiter-v1:max_split_per_batch=16", ctx);
//   double us = e.prediction->metrics.kernel_us;
#include <memory>
#include <string>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/sim/workload.h"

namespace mlasim::sim {

// The workload made concrete: the batch, the GPU profile and its cost parameters.
struct WorkloadContext {
  Workload workload;
  DecodeBatch batch;
  Gpu gpu;
  CostParams params;
  int clusters = 0;  // CUs available to the plan; 0 = all
};

struct Evaluation {
  std::string source;  // the plan's canonical policy spec, or "imported: FILE" for a plan read from disk
  std::shared_ptr<const Plan> plan;
  std::shared_ptr<const Prediction> prediction;
};

// The GPU profile `name` (data/gpus name or a JSON path), read from disk once per process: re-planning on every
// edit in the explorer, or every configuration of a campaign, must not re-read it.
std::shared_ptr<const Gpu> gpu_profile(const std::string& name);

// Throws InputError("clusters", "must be 0 (all) or 1..N on GPU, got X") unless 0 <= clusters <= gpu.num_cu.
void check_clusters(int clusters, const Gpu& gpu);

// Builds the batch, loads the GPU and its cost parameters, checks the clusters; throws InputError naming the field.
WorkloadContext resolve(const Workload& w);

// Plans with the policy and simulates the plan. Throws InputError for a bad spec, knob or unsupported shape.
Evaluation evaluate(const SplitPolicy& policy, const WorkloadContext& ctx);
Evaluation evaluate(const std::string& spec, const WorkloadContext& ctx);

// Simulates a plan made elsewhere (an imported JSON), after checking it fits the workload: InputError("plan", ...)
// quoting the first broken contract otherwise.
Evaluation evaluate_plan(Plan plan, const std::string& origin, const WorkloadContext& ctx);

// The metrics alone, without a timeline: the sweep's inner loop.
Metrics evaluate_metrics(const SplitPolicy& policy, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                         int clusters);

}  // namespace mlasim::sim
