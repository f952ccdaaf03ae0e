// Plan -> check -> simulate on batches the bytes describe: up to 4096 requests of up to 10M KV tokens, every
// registered policy with knob values from its domains, every GPU profile of data/gpus. The planner either plans
// or throws one InputError; a plan passes sim::check_plan, simulates without an error, and its timeline is
// consistent (fuzz_timeline.h); what it leaves dirty in L2 (sim/l2_carry.h, with the H100's carry-over on every
// GPU) is finite and within its bounds.
#include <cmath>
#include <string>

#include "fuzz_batch.h"
#include "fuzz_contract.h"
#include "fuzz_plan.h"
#include "fuzz_timeline.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/sim/l2_carry.h"
#include "mlasim/sim/simulator.h"

using namespace mlasim;

namespace {

// Plans with more works than this are checked but not simulated: the fuzzer's throughput matters more than the
// large plans (the fixed policy's hundreds of splits x thousands of requests), and the simulator's cost grows with
// the works: 65,536 of them took 1.7 s under ASan, 16,384 a quarter of that.
constexpr int kMaxSimulatedWorks = 1 << 14;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const Gpu& gpu = fuzz::pick_gpu(in);
  const std::string spec = fuzz::pick_policy_spec(in);
  const int clusters = fuzz::pick_clusters(in, gpu);
  const DecodeBatch batch = fuzz::pick_batch(in, fuzz::BatchLimits{});
  const std::optional<sim::Plan> checked = fuzz::plan_checked(spec, batch, gpu, clusters);
  if (!checked) return 0;
  const sim::Plan& plan = *checked;
  if (plan.num_works() > kMaxSimulatedWorks) return 0;
  sim::Prediction prediction;
  try {
    prediction = sim::simulate(plan, batch, gpu, cost_params_for(gpu));
    fuzz::check_timeline(plan, prediction);
  } catch (const std::exception& e) {
    fuzz::contract_violation(spec + " on " + gpu.name + ": simulating a checked plan threw: " + e.what());
  }
  const sim::L2Carry carry{0.363, 25.0, 0.54};
  const sim::L2Dirty d = sim::l2_dirty(plan, prediction.timeline, batch, carry);
  const double eps = 1e-9 * (1 + d.stage1_written_mb);
  for (double v : {d.stage1_written_mb, d.stage1_dirty_mb, d.reread_missed_mb, d.reduce_written_mb, d.end_dirty_mb})
    if (!std::isfinite(v) || v < -eps)
      fuzz::contract_violation(spec + " on " + gpu.name + ": an L2 carry-over figure is " + std::to_string(v));
  if (d.stage1_dirty_mb > std::min(d.stage1_written_mb, carry.cap_mb) + eps || d.end_dirty_mb > carry.cap_mb + eps)
    fuzz::contract_violation(spec + " on " + gpu.name + ": more left dirty than written or than the cap");
  return 0;
}
