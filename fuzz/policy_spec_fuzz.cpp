// Policy specs: sim::parse_policy_spec and sim::make_policy. A spec that parses prints canonically and reads back
// as the same spec; a policy made from it carries that canonical text.
#include "fuzz_contract.h"
#include "mlasim/sim/policy_spec.h"
#include "mlasim/sim/split_policy.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_result_or_input_error([&] {
    const sim::PolicySpec spec = sim::parse_policy_spec(text);
    const sim::PolicySpec again = sim::parse_policy_spec(spec.to_string());
    fuzz::require(again.name == spec.name && again.knobs == spec.knobs, "to_string does not read back: " + text);
    const auto policy = sim::make_policy(spec);
    fuzz::require(policy != nullptr, "make_policy returned null");
  });
  fuzz::expect_result_or_input_error([&] { (void)sim::make_policy(std::string_view(text)); });
  return 0;
}
