// Scenario and workload JSON (sim::scenario_from_json, sim::workload_from_json): any JSON gives a value or one
// InputError; a value read once writes out and reads back equal; a workload read makes its batch or says why not.
#include "fuzz_contract.h"
#include "fuzz_json.h"
#include "mlasim/sim/scenario.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = fuzz::parse_json(data, size);
  if (!j) return 0;
  fuzz::expect_result_or_input_error([&] {
    const sim::Scenario s = sim::scenario_from_json(*j);
    fuzz::require(sim::scenario_from_json(sim::scenario_to_json(s)) == s, "scenario JSON does not round-trip");
  });
  fuzz::expect_result_or_input_error([&] {
    const sim::Workload w = sim::workload_from_json(*j);
    fuzz::require(sim::workload_from_json(sim::workload_to_json(w)) == w, "workload JSON does not round-trip");
    (void)w.make_batch();
  });
  return 0;
}
