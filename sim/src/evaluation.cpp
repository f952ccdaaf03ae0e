#include "mlasim/sim/evaluation.h"

#include <map>
#include <mutex>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/plan_checks.h"

namespace mlasim::sim {

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

void check_clusters(int clusters, const Gpu& gpu) {
  if (clusters < 0 || clusters > gpu.num_cu)
    throw InputError("clusters", "must be 0 (all) or 1.." + std::to_string(gpu.num_cu) + " on " + gpu.name + ", got " +
                                     std::to_string(clusters));
}

WorkloadContext resolve(const Workload& w) {
  WorkloadContext ctx;
  ctx.workload = w;
  ctx.batch = w.make_batch();
  ctx.gpu = *gpu_profile(w.gpu);
  check_clusters(w.clusters, ctx.gpu);
  ctx.clusters = w.clusters;
  ctx.params = cost_params_for(ctx.gpu);
  return ctx;
}

namespace {

Evaluation simulated(Plan plan, const WorkloadContext& ctx) {
  auto shared = std::make_shared<const Plan>(std::move(plan));
  auto prediction = std::make_shared<const Prediction>(simulate(*shared, ctx.batch, ctx.gpu, ctx.params));
  return {shared->policy, std::move(shared), std::move(prediction)};
}

}  // namespace

Evaluation evaluate(const SplitPolicy& policy, const WorkloadContext& ctx) {
  return simulated(policy.plan({ctx.batch, ctx.gpu, ctx.clusters}), ctx);
}

Evaluation evaluate(const std::string& spec, const WorkloadContext& ctx) { return evaluate(*make_policy(spec), ctx); }

Evaluation evaluate_plan(Plan plan, const std::string& origin, const WorkloadContext& ctx) {
  if (plan.num_clusters() > ctx.gpu.num_cu)
    throw InputError("plan", origin + " uses " + std::to_string(plan.num_clusters()) + " clusters but " + ctx.gpu.name +
                                 " has " + std::to_string(ctx.gpu.num_cu));
  if (const auto broken = check_plan(plan, ctx.batch); !broken.empty())
    throw InputError("plan", origin + " does not fit the workload (" + std::to_string(ctx.batch.size()) +
                                 " requests): " + broken.front());
  Evaluation e = simulated(std::move(plan), ctx);
  e.source = "imported: " + origin;
  return e;
}

Metrics evaluate_metrics(const SplitPolicy& policy, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                         int clusters) {
  return simulate_metrics(policy.plan({batch, gpu, clusters}), batch, gpu, params);
}

}  // namespace mlasim::sim
