#pragma once
// The contracts every plan keeps, whatever policy made it. Used by tests and by `mlasim plan --check`.
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// Returns one line per violated contract (empty = the plan is sound):
// - work_indptr starts at 0, never decreases, and ends at the work count;
// - the works of each (virtual batch, qo tile), taken in KV order, cover the tile's KV window contiguously, each
// position once,
//   from the request's first page, at least to its causal end and never past the request;
// - the qo tiles of each virtual batch partition its query rows;
// - a tile with one work writes final output (partial -1); a split tile's works have unique partial rows,
//   and exactly one reduce tile lists them in KV order with the tile's (qo_start, qo_end).
std::vector<std::string> check_plan(const Plan& plan, const DecodeBatch& batch);

}  // namespace mlasim::sim
