// Plan JSON (sim::plan_from_json): any JSON gives a plan or one InputError, and a plan read once writes out
// (plan_to_json) as JSON that reads back to the same plan.
#include "fuzz_contract.h"
#include "fuzz_json.h"
#include "mlasim/sim/plan_json.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = fuzz::parse_json(data, size);
  if (!j) return 0;
  fuzz::expect_result_or_input_error([&] {
    const nlohmann::json written = sim::plan_to_json(sim::plan_from_json(*j));
    fuzz::require(sim::plan_to_json(sim::plan_from_json(written)) == written, "plan JSON does not round-trip");
  });
  return 0;
}
