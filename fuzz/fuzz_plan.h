#pragma once
// The planning step the structured targets share: the policy plans the batch under the contract (a plan or one
// InputError), and every plan it makes must pass sim::check_plan.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "fuzz_contract.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan_checks.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::fuzz {

// The checked plan, or nullopt when the batch or the policy refused with an InputError. With MLASIM_FUZZ_TRACE set
// in the environment, one line per input says what was planned (to see what a slow or crashing unit decodes to).
inline std::optional<sim::Plan> plan_checked(const std::string& spec, const DecodeBatch& batch, const Gpu& gpu,
                                             int clusters) {
  static const bool trace = std::getenv("MLASIM_FUZZ_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "plan %s on %s, clusters %d: %d requests, %lld KV tokens, %d heads, page %d\n", spec.c_str(),
                 gpu.name.c_str(), clusters, batch.size(), static_cast<long long>(batch.total_kv_tokens()),
                 batch.q_heads, batch.page_size);
  std::optional<sim::Plan> plan;
  expect_result_or_input_error([&] {
    batch.validate();
    plan = sim::make_policy(spec)->plan(sim::PlanRequest{batch, gpu, clusters});
  });
  if (!plan) return std::nullopt;
  if (trace) std::fprintf(stderr, "  %d works\n", plan->num_works());
  const std::vector<std::string> problems = sim::check_plan(*plan, batch);
  if (!problems.empty()) contract_violation(spec + " on " + gpu.name + ": " + problems.front());
  return plan;
}

}  // namespace mlasim::fuzz
