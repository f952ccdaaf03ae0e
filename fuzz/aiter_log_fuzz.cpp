// The AITER op-test log importer (validate::import_aiter_log) and format detection. The first byte picks the CU
// count of the context (0: no cap), so the msb cap's arithmetic is fuzzed too.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_contract.h"
#include "mlasim/validate/measurement_import.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  validate::ImportContext context;
  context.num_cu = provider.ConsumeIntegralInRange<int>(0, 320);
  const std::string text = provider.ConsumeRemainingBytesAsString();
  fuzz::expect_result_or_input_error([&] {
    (void)validate::detect_measurement_format(text);
    const validate::MeasurementImport imported = validate::import_aiter_log(text, "fuzz.log", context);
    (void)validate::format_measurement_csv(imported.rows);
  });
  return 0;
}
