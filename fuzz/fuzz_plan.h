#pragma once
// The planning step the structured targets share: the policy plans the batch under the contract (a plan or one
// InputError), and every plan it makes must pass sim::check_plan.
#include <optional>
#include <string>

#include "fuzz_contract.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan_checks.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::fuzz {

// The checked plan, or nullopt when the batch or the policy refused with an InputError.
inline std::optional<sim::Plan> plan_checked(const std::string& spec, const DecodeBatch& batch, const Gpu& gpu,
                                             int clusters) {
  std::optional<sim::Plan> plan;
  expect_result_or_input_error([&] {
    batch.validate();
    plan = sim::make_policy(spec)->plan(sim::PlanRequest{batch, gpu, clusters});
  });
  if (!plan) return std::nullopt;
  const std::vector<std::string> problems = sim::check_plan(*plan, batch);
  if (!problems.empty()) contract_violation(spec + " on " + gpu.name + ": " + problems.front());
  return plan;
}

}  // namespace mlasim::fuzz
