#pragma once
// Plans as JSON, in the layout of AITER's planner reference data: derived, model, buffer_sizes, outputs.
#include <nlohmann/json.hpp>
#include <string>

#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// {derived, model, buffer_sizes, outputs}; unwritten buffer entries become null.
nlohmann::json plan_to_json(const Plan& plan);

// Reads a plan back from plan_to_json's layout (also a plan dumped from AITER: work_indptr, work_info_set and
// the reduce arrays under "outputs" or at the top level). Throws InputError naming the field.
Plan plan_from_json(const nlohmann::json& j);

// The `inputs` object of a reference case -> planner arguments. Throws InputError naming the field.
AiterV1Args aiter_args_from_json(const nlohmann::json& inputs);

}  // namespace mlasim::sim
