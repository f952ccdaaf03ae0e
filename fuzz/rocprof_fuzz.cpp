// The rocprofv3 kernel-trace importer (validate::import_rocprof_trace) for a workload the first bytes choose.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_contract.h"
#include "mlasim/validate/measurement_import.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  validate::ImportContext context;
  context.workload.batch = provider.ConsumeIntegralInRange<int>(1, 64);
  context.workload.context = provider.ConsumeIntegralInRange<int>(1, 1 << 20);
  context.workload.heads = 8 * provider.ConsumeIntegralInRange<int>(1, 16);
  context.workload.policy = "aiter-v1";
  const std::string text = provider.ConsumeRemainingBytesAsString();
  fuzz::expect_result_or_input_error([&] {
    (void)validate::import_rocprof_trace(text, "fuzz.csv", context);
    (void)validate::import_measurements(text, "fuzz.csv", validate::MeasurementFormat::automatic, context);
  });
  return 0;
}
