#pragma once
// A split policy turns a decode batch on a GPU into a Plan.
//
// Contract: plan() is deterministic and thread-safe (sweeps call it from many threads); it validates its
// inputs and throws InputError naming the field; the returned Plan covers every KV position of every
// (request, qo tile) exactly once, and its reduce maps list each split tile's partials in KV order.
#include <memory>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/kernel_traits.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/policy_spec.h"

namespace mlasim::sim {

// One knob of a policy, declared once: it drives the CLI help, the GUI form and validation.
struct KnobInfo {
  enum class Type { integer, real, choice };
  std::string name;
  Type type = Type::integer;
  std::string default_value;        // as text; "" means "derived", explained in `doc`
  double min = 0, max = 0;          // inclusive range for integer and real knobs
  std::vector<std::string> choices; // for choice knobs; also extra words an integer knob accepts
  std::string doc;
};

struct PlanRequest {
  const DecodeBatch& batch;
  const Gpu& gpu;
  int clusters = 0;  // clusters (CUs/SMs) available; 0 means the whole GPU
  Arch arch = parse_arch(gpu.arch);  // the GPU's arch string read once; every arch rule takes this value
};

class SplitPolicy {
 public:
  virtual ~SplitPolicy() = default;
  virtual std::string name() const = 0;
  virtual KernelKind kernel() const = 0;
  virtual Plan plan(const PlanRequest& request) const = 0;
};

struct PolicyInfo {
  std::string name;
  std::string doc;
  KernelKind kernel;
  std::vector<KnobInfo> knobs;
  // Builds the policy from validated knob values (every declared knob present, defaults filled in).
  std::unique_ptr<SplitPolicy> (*make)(const std::map<std::string, std::string>& knobs);
};

// Every built-in policy, in display order.
const std::vector<PolicyInfo>& policy_registry();
const PolicyInfo* find_policy(const std::string& name);

// Validates a spec against its policy's knob table and builds it. Errors name the knob and its allowed values,
// e.g. "max_split_per_batch: must be -1, vllm or 1..4096, got 0".
std::unique_ptr<SplitPolicy> make_policy(const PolicySpec& spec);
std::unique_ptr<SplitPolicy> make_policy(std::string_view spec_text);

// Helpers for policy implementations: read a validated knob.
long knob_int(const std::map<std::string, std::string>& knobs, const std::string& key);
double knob_real(const std::map<std::string, std::string>& knobs, const std::string& key);

}  // namespace mlasim::sim
