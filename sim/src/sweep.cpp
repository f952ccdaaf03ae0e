#include "mlasim/sim/sweep.h"

#include <atomic>
#include <memory>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/split_policy.h"
#include "parallel_chunks.h"

namespace mlasim::sim {
namespace {

template <typename T>
void require_non_empty(const std::vector<T>& v, const char* field) {
  if (v.empty()) throw InputError(field, "needs at least one value");
}

DecodeBatch batch_for(const SweepGrid& grid, int batch, int context) {
  DecodeBatch b = grid.shape;
  b.topk_lens.clear();  // per-request top-k lengths name one batch; a sweep varies it (the top-k stays)
  b.kv_lens.assign(static_cast<size_t>(batch), context);
  b.qo_lens.assign(static_cast<size_t>(batch), grid.qo_len);
  return b;
}

}  // namespace

size_t sweep_size(const SweepGrid& g) {
  return g.gpus.size() * g.batches.size() * g.contexts.size() * g.clusters.size() * g.policies.size();
}

void validate_sweep(const SweepGrid& g) {
  require_non_empty(g.gpus, "gpu");
  require_non_empty(g.batches, "batch");
  require_non_empty(g.contexts, "context");
  require_non_empty(g.clusters, "clusters");
  require_non_empty(g.policies, "policy");
  for (const std::string& spec : g.policies) make_policy(spec);
  for (const Gpu& gpu : g.gpus) {
    for (int c : g.clusters) check_clusters(c, gpu);
    cost_params_for(gpu);  // a profile with a parameter out of range fails here, not mid-sweep
  }
  for (int b : g.batches)
    if (b < 1) throw InputError("batch", "must be >= 1, got " + std::to_string(b));
  for (int c : g.contexts)
    if (c < 1) throw InputError("context", "must be >= 1 token, got " + std::to_string(c));
  batch_for(g, g.batches.front(), g.contexts.front()).validate();
}

SweepResult run_sweep(const SweepGrid& g, const std::function<void(size_t, size_t)>& progress) {
  validate_sweep(g);
  SweepResult r;
  std::vector<std::unique_ptr<SplitPolicy>> policies;
  for (const std::string& spec : g.policies) {
    policies.push_back(make_policy(spec));
    r.policies.push_back(policies.back()->spec());
  }
  std::vector<CostParams> params;
  for (const Gpu& gpu : g.gpus) params.push_back(cost_params_for(gpu));

  const size_t total = sweep_size(g);
  r.points.reserve(total);
  for (int gi = 0; gi < static_cast<int>(g.gpus.size()); ++gi)
    for (int b : g.batches)
      for (int c : g.contexts)
        for (int cl : g.clusters)
          for (int p = 0; p < static_cast<int>(policies.size()); ++p) r.points.push_back({gi, b, c, cl, p});
  r.metrics.resize(total);

  std::atomic<size_t> done{0};
  detail::parallel_chunks(total, 16, [&](size_t begin, size_t end) {
    for (size_t i = begin; i != end; ++i) {
      const SweepPoint& pt = r.points[i];
      const Gpu& gpu = g.gpus[static_cast<size_t>(pt.gpu)];
      const DecodeBatch batch = batch_for(g, pt.batch, pt.context);
      r.metrics[i] = evaluate_metrics(*policies[static_cast<size_t>(pt.policy)], batch, gpu,
                                      params[static_cast<size_t>(pt.gpu)], pt.clusters);
    }
    const size_t now = done.fetch_add(end - begin, std::memory_order_relaxed) + (end - begin);
    if (progress) progress(now, total);
  });
  return r;
}

std::vector<ReportRow> report_rows(const SweepGrid& g, const SweepResult& r) {
  std::vector<ReportRow> rows;
  rows.reserve(r.points.size());
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    rows.push_back({g.gpus[static_cast<size_t>(p.gpu)].name, r.policies[static_cast<size_t>(p.policy)], p.batch,
                    std::to_string(p.context), p.clusters, r.metrics[i]});
  }
  return rows;
}

}  // namespace mlasim::sim
