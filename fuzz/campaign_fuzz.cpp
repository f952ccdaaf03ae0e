// Campaign JSON (validate::campaign_from_json): any JSON gives a campaign or one InputError, and a campaign read
// writes out (campaign_to_json) as JSON that reads back to the same JSON.
#include "fuzz_contract.h"
#include "fuzz_json.h"
#include "mlasim/validate/campaign.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = fuzz::parse_json(data, size);
  if (!j) return 0;
  fuzz::expect_result_or_input_error([&] {
    const nlohmann::json written = validate::campaign_to_json(validate::campaign_from_json(*j));
    fuzz::require(validate::campaign_to_json(validate::campaign_from_json(written)) == written,
                  "campaign JSON does not round-trip");
  });
  return 0;
}
