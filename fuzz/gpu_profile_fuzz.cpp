// GPU profile JSON (parse_gpu_json) and the cost parameters a profile gives (cost_params_for): any text gives a
// profile or one InputError; a profile read writes out (gpu_to_json) as text that reads back.
#include "fuzz_contract.h"
#include "mlasim/model/cost_model.h"
#include "mlasim/model/gpu.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_result_or_input_error([&] {
    const Gpu gpu = parse_gpu_json(fuzz::as_text(data, size), "fuzz.json");
    const std::string written = gpu_to_json(gpu);
    fuzz::require(gpu_to_json(parse_gpu_json(written, "written.json")) == written, "GPU JSON does not round-trip");
    validate_cost_params(cost_params_for(gpu));
  });
  return 0;
}
