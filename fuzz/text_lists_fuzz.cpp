// The comma-list parsers (text_lists.h): integers at or above a minimum the first byte picks, and names.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_contract.h"
#include "mlasim/model/text_lists.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  const int min_value = provider.ConsumeIntegralInRange<int>(-2, 2);
  const std::string text = provider.ConsumeRemainingBytesAsString();
  fuzz::expect_result_or_input_error([&] {
    for (int v : parse_int_list(text, "list", min_value))
      fuzz::require(v >= min_value, "parse_int_list returned a value below its minimum");
  });
  fuzz::expect_result_or_input_error([&] {
    for (const std::string& name : parse_name_list(text, "names"))
      fuzz::require(!name.empty(), "parse_name_list returned an empty name");
  });
  return 0;
}
