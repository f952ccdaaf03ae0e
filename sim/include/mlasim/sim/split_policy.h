#pragma once
// A split policy turns a decode batch on a GPU into a Plan.
//
// Contract: plan() is deterministic and thread-safe (sweeps call it from many threads); it validates its
// inputs and throws InputError naming the field; the returned Plan covers every KV position of every
// (request, qo tile) exactly once, and its reduce maps list each split tile's partials in KV order.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/graph_buffers.h"
#include "mlasim/sim/kernel_traits.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/policy_knobs.h"
#include "mlasim/sim/policy_spec.h"

namespace mlasim::sim {

struct PlanRequest {
  const DecodeBatch& batch;
  const Gpu& gpu;
  int clusters = 0;                  // clusters (CUs/SMs) available; 0 means the whole GPU
  Arch arch = parse_arch(gpu.arch);  // the GPU's arch string read once; every arch rule takes this value
};

class SplitPolicy {
 public:
  virtual ~SplitPolicy() = default;
  const std::string& name() const { return name_; }
  // The canonical spec the policy was made from ("aiter-v1:max_split_per_batch=16"); every plan carries it.
  const std::string& spec() const { return spec_; }
  virtual KernelKind kernel() const = 0;
  // How the policy plans a sparse (top-k) batch: the gathered rows each query token gets; none = it cannot.
  virtual GatheredRows sparse_rows() const { return GatheredRows::none; }

  // Plans `request`, then stamps the plan with spec() (Plan::policy) and the CUs it may use (Plan::cu_limit).
  // A sparse batch is planned as its per-token batch (gathered_batch with sparse_rows()), unless the policy
  // schedules sparse batches itself; the plan records the convention (Plan::gathered). A policy that cannot
  // plan sparse decode throws InputError("topk", ...).
  Plan plan(const PlanRequest& request) const;

  // The buffers a graph-captured step allocates once for every batch up to `largest` (its request count, query
  // length, heads, dtypes and top-k; its lengths do not matter); nullopt when the policy has no graph-safe
  // sizing rule. Every plan of a batch within those limits fits them (check_plan_fits).
  virtual std::optional<GraphBuffers> graph_buffers(const PlanRequest& largest) const;

 protected:
  explicit SplitPolicy(const PolicySpec& spec) : name_(spec.name), spec_(spec.to_string()) {}

 private:
  // The policy's own planner: validates the request and builds work lists and reduce maps.
  virtual Plan build_plan(const PlanRequest& request) const = 0;
  // True when build_plan takes sparse batches as they are (it schedules requests, not tokens, and returns a
  // plan over the per-token batch); else plan() hands it the per-token batch.
  virtual bool schedules_sparse_batches() const { return false; }

  std::string name_;
  std::string spec_;
};

struct PolicyInfo {
  std::string name;
  std::string doc;
  KernelKind kernel;
  std::vector<KnobInfo> knobs;
  // Builds the policy from its validated knob values (every declared knob present, defaults filled in).
  std::unique_ptr<SplitPolicy> (*make)(const KnobValues& knobs);
};

// Every built-in policy, in display order.
const std::vector<PolicyInfo>& policy_registry();
const PolicyInfo* find_policy(const std::string& name);

// The registered policies' names, comma-separated, in display order; with `keep`, only those whose policy made
// with default knobs it accepts (for messages such as "policies that do: ...").
std::string policy_names(const std::function<bool(const SplitPolicy&)>& keep = nullptr);

// The batch a plan's works index: `batch` itself for a dense plan, the per-token batch of the plan's convention
// for a sparse one. Throws InputError("plan", ...) when the plan and the batch disagree on being sparse.
DecodeBatch kernel_batch(const Plan& plan, const DecodeBatch& batch);

// Validates a spec against its policy's knob table and builds it. Errors name the knob and its domain,
// e.g. "max_split_per_batch: must be -1, vllm or 1..4096, got 0".
std::unique_ptr<SplitPolicy> make_policy(const PolicySpec& spec);
std::unique_ptr<SplitPolicy> make_policy(std::string_view spec_text);

}  // namespace mlasim::sim
