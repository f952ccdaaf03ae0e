// Step name rules (validate::step_rules_from_json, data/step/*.json) and the classes they give a few kernel names.
#include "fuzz_contract.h"
#include "mlasim/validate/step_rules.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_result_or_input_error([&] {
    const validate::StepRules rules = validate::step_rules_from_json(text, "fuzz.json");
    fuzz::require(!rules.rules.empty() && !rules.name.empty(), "rules read without a name or a rule");
    for (const char* name :
         {"void mla_decode_wgmma_persistent_kernel<2>(DecodeParams)", "Memcpy DtoD", "nvjet", "q_prep_fused_kernel"}) {
      const std::string& c = rules.classify(name);
      validate::check_step_class(c, "class");
    }
  });
  return 0;
}
