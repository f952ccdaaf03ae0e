// Step name rules (validate::step_rules_from_json, data/step/*.json) and the classes they give a few kernel names;
// the same text as a step edit (validate::parse_step_edit), the other way a user's regex reaches std::regex, and as
// an op-bytes file (validate::op_bytes_from_json), whose bytes must come out finite and not negative, and as a
// step-batches file (validate::step_batches_from_json), whose every batch must pass DecodeBatch::validate.
#include <cmath>

#include "fuzz_contract.h"
#include "mlasim/validate/op_bytes.h"
#include "mlasim/validate/step_batches.h"
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
  fuzz::expect_result_or_input_error([&] {
    const validate::OpBytesRules ops = validate::op_bytes_from_json(text, "fuzz.json");
    fuzz::require(!ops.entries.empty(), "op bytes read without an entry");
    for (const validate::StepKernel& k : {validate::StepKernel{"q_absorb_bmm_kernel", "q_prep", 4, 1, {}},
                                          validate::StepKernel{"memcpy128", "copy", 10, 1, {}}})
      if (const auto b = ops.of(k, 65536))
        fuzz::require(
            std::isfinite(b->read_mb) && std::isfinite(b->written_mb) && b->read_mb >= 0 && b->written_mb >= 0,
            "op bytes that are not finite and >= 0");
  });
  fuzz::expect_result_or_input_error([&] {
    DecodeBatch flags = DecodeBatch::uniform(16, 4096);
    flags.q_heads = 128;
    flags.page_size = 64;
    flags.kv_granularity = 64;
    const validate::StepBatches batches = validate::step_batches_from_json(text, "fuzz.json", flags);
    fuzz::require(!batches.steps.empty(), "step batches read without a step");
    for (const DecodeBatch& b : batches.steps) {
      try {
        b.validate();
      } catch (const InputError& e) {
        fuzz::contract_violation(std::string("a step batch the reader let through: ") + e.what());
      }
      fuzz::require(b.size() <= validate::kMaxStepBatch && b.q_heads == 128 && b.page_size == 64,
                    "a step batch past the launch grid's bound or off the flags' shape");
    }
  });
  return 0;
}
