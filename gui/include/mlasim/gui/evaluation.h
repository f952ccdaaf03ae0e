#pragma once
// Plans and predictions of a scenario's two sides (A and B): what every view of the explorer shows.
// Results are immutable and shared, so views and worker threads can hold them without copies or locks.
#include <array>
#include <memory>
#include <string>

#include "mlasim/gui/scenario.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::gui {

// The workload, made concrete: the batch, the GPU profile and its cost parameters.
struct WorkloadContext {
  DecodeBatch batch;
  Gpu gpu;
  CostParams params;
  int clusters = 0;  // CUs available to the plan; 0 = all
};

// One side of the comparison. `source` is the canonical policy spec, or "imported: FILE" for a plan read from disk.
struct SideResult {
  std::string source;
  std::shared_ptr<const sim::Plan> plan;
  std::shared_ptr<const sim::Prediction> prediction;
};

// The GPU profile `name`, read from disk once per process (re-planning on every edit must not re-read it).
std::shared_ptr<const Gpu> gpu_profile(const std::string& name);

// Builds the batch and loads the GPU; throws InputError naming the bad field.
std::shared_ptr<const WorkloadContext> make_context(const Workload& w);

// Plans with the policy `spec` and simulates the plan. Throws InputError for a bad spec or knob value.
SideResult evaluate_policy(const std::string& spec, const WorkloadContext& ctx);

// Simulates a plan made elsewhere (an imported JSON), after checking it fits the workload: InputError("plan", ...)
// quoting the first broken contract otherwise.
SideResult evaluate_plan(sim::Plan plan, const std::string& origin, const WorkloadContext& ctx);

// B's speedup over A in kernel time (A / B); 0 when either side is missing.
double speedup_b_over_a(const SideResult& a, const SideResult& b);

}  // namespace mlasim::gui
