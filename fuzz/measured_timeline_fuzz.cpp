// Measured timeline JSON (validate::measured_timeline_from_json, the Chrome trace `mlasim validate --timeline`
// writes): any JSON gives a timeline or one InputError, and a timeline read writes out
// (measured_timeline_to_json) as JSON that reads back to the same JSON.
#include "fuzz_contract.h"
#include "fuzz_json.h"
#include "mlasim/validate/measured_timeline.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = fuzz::parse_json(data, size);
  if (!j) return 0;
  fuzz::expect_result_or_input_error([&] {
    (void)validate::is_measured_timeline(*j);
    const nlohmann::ordered_json written =
        validate::measured_timeline_to_json(validate::measured_timeline_from_json(*j));
    fuzz::require(validate::measured_timeline_to_json(validate::measured_timeline_from_json(written)) == written,
                  "measured timeline JSON does not round-trip");
  });
  return 0;
}
