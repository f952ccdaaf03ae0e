// Kernel traces for the decode-step what-if (validate::parse_kernel_trace: Chrome-trace JSON or rocprofv3 CSV), cut
// into steps with the options the first bytes choose, classed by the mlasim-torch rules and edited.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>

#include "fuzz_contract.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_what_if.h"

using namespace mlasim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const validate::StepRules rules = validate::load_step_rules("mlasim-torch");
  static const std::vector<validate::StepEdit> edits = {
      validate::parse_step_edit("fuse=q_prep:us=2"), validate::parse_step_edit("remove=copy"),
      validate::parse_step_edit("remove=re:gemm"), validate::parse_step_edit("gaps=1")};
  FuzzedDataProvider provider(data, size);
  validate::StepOptions options;
  options.skip = provider.ConsumeIntegralInRange<int>(-1, 3);
  options.step_gap_us = provider.ConsumeFloatingPointInRange<double>(-1, 1000);
  options.use_markers = provider.ConsumeBool();
  const std::string text = provider.ConsumeRemainingBytesAsString();
  fuzz::expect_result_or_input_error([&] {
    const validate::KernelTrace trace = validate::parse_kernel_trace(text, "fuzz");
    fuzz::require(!trace.kernels.empty(), "a trace read without a kernel");
    const validate::StepAnalysis a = validate::analyse_steps(trace, rules, options);
    size_t kernels = 0;
    for (const validate::DecodeStep& s : a.steps) {
      const double t = s.time_us();
      fuzz::require(std::isfinite(t) && t >= 0 && s.gaps_us() >= 0 && s.gaps_us() <= t + 1e-6 * (1 + t),
                    "a step's time is not finite, negative, or below its gaps");
      kernels += s.kernels.size();
    }
    fuzz::require(kernels <= trace.kernels.size(), "steps hold more kernels than the trace");
    const validate::StepWhatIf w = validate::apply_step_edits(a, edits, {});
    fuzz::require(w.after_summary.time_us >= 0 && std::isfinite(w.after_summary.time_us), "an edited step is not >= 0");
  });
  return 0;
}
