// The public-measurements importer (validate::import_public_measurements) and the GPU-label matcher it uses.
#include "fuzz_contract.h"
#include "mlasim/validate/public_measurements.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_result_or_input_error([&] {
    const validate::PublicImport imported = validate::import_public_measurements(text, "fuzz.csv");
    (void)validate::format_measurement_csv(imported.rows);
  });
  fuzz::expect_result_or_input_error([&] { (void)validate::profile_name_for_label(text); });
  return 0;
}
