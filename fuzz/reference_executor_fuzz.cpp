// Small batches (up to 8 requests of up to 256 KV tokens) through every registered policy, then the reference
// executor: running the plan's works and reduce on random tensors gives the same attention as computing it
// directly, so the plan covers every query row and KV position once, with correct splits, maps and masks.
#include <algorithm>

#include "fuzz_batch.h"
#include "fuzz_contract.h"
#include "fuzz_plan.h"
#include "fuzz_timeline.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/sim/reference_executor.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const Gpu& gpu = fuzz::pick_gpu(in);
  const std::string spec = fuzz::pick_policy_spec(in);
  const int clusters = fuzz::pick_clusters(in, gpu);
  const uint64_t seed = in.ConsumeIntegral<uint64_t>();
  const DecodeBatch batch = fuzz::pick_batch(in, fuzz::BatchLimits{8, 256, 4});
  const std::optional<sim::Plan> checked = fuzz::plan_checked(spec, batch, gpu, clusters);
  if (!checked) return 0;
  const sim::Plan& plan = *checked;
  try {
    fuzz::check_timeline(plan, sim::simulate(plan, batch, gpu, cost_params_for(gpu)));
    // Narrow heads and a sample of two heads keep each run to milliseconds; head folding still shows.
    sim::ReferenceOptions options;
    options.d_qk = 16;
    options.d_v = 8;
    options.seed = seed;
    options.heads = {0, batch.q_heads - 1};
    // A sparse plan runs over its gathered per-token batch: the attention over each token's rows.
    const DecodeBatch kernel_batch = sim::kernel_batch(plan, batch);
    const sim::ReferenceExecutor executor(kernel_batch, options);
    const std::vector<float> planned_out = executor.run_plan(plan);
    const std::vector<float> direct_out = executor.run_direct();
    const float tolerance = 1e-4f * std::max(1.0f, sim::max_abs_value(direct_out));
    fuzz::require(sim::max_abs_difference(planned_out, direct_out) <= tolerance,
                  spec + " on " + gpu.name + ": the plan's attention differs from the direct one");
  } catch (const std::exception& e) {
    fuzz::contract_violation(spec + " on " + gpu.name + ": running a checked plan threw: " + e.what());
  }
  return 0;
}
