#include "mlasim/sim/split_policy.h"

#include <string>
#include <vector>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::sim {

Plan SplitPolicy::plan(const PlanRequest& request) const {
  Plan p;
  if (!request.batch.is_sparse()) {
    p = build_plan(request);
  } else {
    const GatheredRows rows = sparse_rows();
    if (rows == GatheredRows::none)
      throw InputError(
          request.batch.scopes.on() ? "dsv4" : "topk",
          name_ + " does not plan sparse (top-k or two-scope) decode; policies that do: " +
              policy_names([](const SplitPolicy& other) { return other.sparse_rows() != GatheredRows::none; }));
    // A two-scope batch is planned as its streams, a top-k batch of its own.
    const bool scoped = request.batch.scopes.on();
    const DecodeBatch streams = scoped ? scope_stream_batch(request.batch, rows) : DecodeBatch{};
    const DecodeBatch& sparse = scoped ? streams : request.batch;
    if (schedules_sparse_batches()) {
      p = build_plan(PlanRequest{sparse, request.gpu, request.clusters, request.arch});
    } else {
      const DecodeBatch tokens = gathered_batch(sparse, rows);
      p = build_plan(PlanRequest{tokens, request.gpu, request.clusters, request.arch});
    }
    p.gathered = rows;
  }
  p.policy = spec_;
  // build_plan has checked the request's clusters against the GPU.
  p.cu_limit = request.clusters > 0 ? request.clusters : request.gpu.num_cu;
  return p;
}

std::optional<GraphBuffers> SplitPolicy::graph_buffers(const PlanRequest&) const { return std::nullopt; }

const PolicyInfo* find_policy(const std::string& name) {
  for (const auto& p : policy_registry())
    if (p.name == name) return &p;
  return nullptr;
}

std::string policy_names(const std::function<bool(const SplitPolicy&)>& keep) {
  std::vector<std::string> names;
  for (const auto& info : policy_registry())
    if (!keep || keep(*info.make(KnobValues(info.knobs, PolicySpec{info.name, {}})))) names.push_back(info.name);
  return join_names(names);
}

std::unique_ptr<SplitPolicy> make_policy(const PolicySpec& spec) {
  const PolicyInfo* info = find_policy(spec.name);
  if (!info) throw InputError("policy", "unknown policy '" + spec.name + "'; known: " + policy_names());
  return info->make(KnobValues(info->knobs, spec));
}

DecodeBatch kernel_batch(const Plan& plan, const DecodeBatch& batch) {
  if (batch.is_sparse() != (plan.gathered != GatheredRows::none))
    throw InputError("plan", batch.is_sparse()
                                 ? "a dense plan cannot run a sparse (top-k) batch; plan it for top-k"
                                 : "a sparse plan (gathered rows: " + std::string(gathered_rows_name(plan.gathered)) +
                                       ") cannot run a dense batch");
  return batch.is_sparse() ? gathered_batch(batch, plan.gathered) : batch;
}

std::unique_ptr<SplitPolicy> make_policy(std::string_view spec_text) {
  return make_policy(parse_policy_spec(spec_text));
}

}  // namespace mlasim::sim
