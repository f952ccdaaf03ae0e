// The measurement CSV reader (validate::parse_measurement_csv): any text gives rows or one InputError, and the
// rows it gives can be written back (format_measurement_csv).
#include "fuzz_contract.h"
#include "mlasim/validate/measurement_csv.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_result_or_input_error([&] {
    const auto rows = validate::parse_measurement_csv(fuzz::as_text(data, size), "fuzz.csv");
    (void)validate::format_measurement_csv(rows);
  });
  return 0;
}
