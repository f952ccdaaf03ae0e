#include "mlasim/gui/evaluation.h"

#include <map>
#include <mutex>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/plan_checks.h"
#include "mlasim/sim/policy_spec.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::gui {

std::shared_ptr<const Gpu> gpu_profile(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Gpu>> cache;
  {
    const std::lock_guard lock(mutex);
    if (auto it = cache.find(name); it != cache.end()) return it->second;
  }
  auto gpu = std::make_shared<const Gpu>(load_gpu(name));
  const std::lock_guard lock(mutex);
  return cache.emplace(name, std::move(gpu)).first->second;
}

std::shared_ptr<const WorkloadContext> make_context(const Workload& w) {
  auto ctx = std::make_shared<WorkloadContext>();
  ctx->batch = w.make_batch();
  ctx->gpu = *gpu_profile(w.gpu);
  if (w.clusters < 0 || w.clusters > ctx->gpu.num_cu)
    throw InputError("clusters", "must be 0 (all) or 1.." + std::to_string(ctx->gpu.num_cu) + " on " +
                                     ctx->gpu.name + ", got " + std::to_string(w.clusters));
  ctx->clusters = w.clusters;
  ctx->params = cost_params_for(ctx->gpu);
  return ctx;
}

SideResult evaluate_policy(const std::string& spec, const WorkloadContext& ctx) {
  const sim::PolicySpec parsed = sim::parse_policy_spec(spec);
  const auto policy = sim::make_policy(parsed);
  auto plan = std::make_shared<sim::Plan>(policy->plan({ctx.batch, ctx.gpu, ctx.clusters}));
  auto prediction = std::make_shared<const sim::Prediction>(sim::simulate(*plan, ctx.batch, ctx.gpu, ctx.params));
  return {plan->policy, std::move(plan), std::move(prediction)};
}

SideResult evaluate_plan(sim::Plan plan, const std::string& origin, const WorkloadContext& ctx) {
  if (plan.num_clusters() > ctx.gpu.num_cu)
    throw InputError("plan", origin + " uses " + std::to_string(plan.num_clusters()) + " clusters but " +
                                 ctx.gpu.name + " has " + std::to_string(ctx.gpu.num_cu));
  if (const auto broken = sim::check_plan(plan, ctx.batch); !broken.empty())
    throw InputError("plan", origin + " does not fit the workload (" + std::to_string(ctx.batch.size()) +
                                 " requests): " + broken.front());
  auto shared = std::make_shared<const sim::Plan>(std::move(plan));
  auto prediction = std::make_shared<const sim::Prediction>(sim::simulate(*shared, ctx.batch, ctx.gpu, ctx.params));
  return {"imported: " + origin, std::move(shared), std::move(prediction)};
}

double speedup_b_over_a(const SideResult& a, const SideResult& b) {
  if (!a.prediction || !b.prediction || b.prediction->metrics.kernel_us <= 0) return 0;
  return a.prediction->metrics.kernel_us / b.prediction->metrics.kernel_us;
}

}  // namespace mlasim::gui
