#pragma once
// The readable summary of a plan, shared by the CLI and the GUI's text views.
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// One line naming the workload, e.g. "4 x 100000 tokens, 16 heads, fp8/fp8, qlen 1, page 1 on mi355x (256 CUs)".
std::string describe_workload(const DecodeBatch& batch, const Gpu& gpu, int clusters);

// Summary (clusters used, works, splits per request, payload, reduce tiles and partials) and a compact
// per-cluster table in which runs of clusters with the same shape share a line.
std::string format_plan_text(const Plan& plan, int page_size);

}  // namespace mlasim::sim
