// Step name rules (validate::step_rules_from_json, data/step/*.json) and the classes they give a few kernel names;
// the same text as a step edit (validate::parse_step_edit), the other way a user's regex reaches std::regex.
#include "fuzz_contract.h"
#include "mlasim/validate/step_rules.h"
#include "mlasim/validate/step_what_if.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_result_or_input_error([&] {
    const validate::StepRules rules = validate::step_rules_from_json(text, "fuzz.json");
    fuzz::require(!rules.rules.empty() && !rules.name.empty(), "rules read without a name or a rule");
    for (const char* name :
         {"void mla_decode_wgmma_persistent_kernel<2>(DecodeParams)", "Memcpy DtoD", "nvjet", "q_prep_fused_kernel"}) {
      const std::string& c = rules.classify(name);
      validate::check_step_class(c, "class");
    }
  });
  fuzz::expect_result_or_input_error([&] {
    const validate::StepEdit edit = validate::parse_step_edit(text);
    fuzz::require(edit.text == text, "an edit that does not keep its text");
  });
  return 0;
}
