// Reference plan cases (the golden JSONL format of tests/data/aiter_v1_golden_sample.jsonl, read by
// `mlasim plan --cases`): each line's `inputs` through sim::aiter_args_from_json and the v1.2 planner. A case
// that plans gives a plan whose work lists and reduce maps are well formed.
#include <sstream>

#include "fuzz_contract.h"
#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/plan_json.h"

using namespace mlasim;

namespace {

// The planner's own outputs, checked without the batch (check_plan needs one; plan_simulate_fuzz runs it).
void check_plan_shape(const sim::Plan& plan) {
  fuzz::require(plan.work_indptr.size() >= static_cast<size_t>(plan.num_work_lists()) + 1, "work_indptr too short");
  fuzz::require(plan.work_indptr.front() == 0, "work_indptr does not start at 0");
  fuzz::require(plan.work_indptr[static_cast<size_t>(plan.num_work_lists())] == plan.num_works(),
                "work_indptr does not end at the work count");
  for (const sim::WorkInfo& w : plan.works)
    fuzz::require(w.kv_start <= w.kv_end && w.qo_start < w.qo_end, "a work with an empty or reversed range");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(fuzz::as_text(data, size));
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("inputs")) continue;  // the CLI's InputErrors
    fuzz::expect_result_or_input_error([&] {
      const sim::AiterV1Args args = sim::aiter_args_from_json(j["inputs"]);
      check_plan_shape(sim::plan_aiter_v1(args));
    });
  }
  return 0;
}
