#include "mlasim/sim/trace_device_time.h"

#include <algorithm>

namespace mlasim::sim {

int plan_kernels(const Plan& plan, const DecodeBatch& batch) {
  // The scope merge runs when the simulator builds merge tiles (build_merge_tiles): for the batch's merged tokens.
  return 1 + (plan.num_partials() > 0 ? 1 : 0) + (batch.merged_tokens().empty() ? 0 : 1);
}

double trace_device_us(const Metrics& metrics, const CostParams& params, int kernels) {
  const double events = params.events_overhead_us + std::max(0, kernels - 1) * params.events_kernel_overhead_us;
  return std::max(0.0, metrics.kernel_us - events);
}

}  // namespace mlasim::sim
