#pragma once
// The CPU fp32 reference of one MLA decode step: causal softmax(q k^T * scale) v per query row and head, over
// exactly the bf16/fp8 inputs the kernels read. Independent of any plan.
#include <vector>

#include "mlasim/kernels/mla_problem.h"

namespace mlasim::kernels {

// Output [q_rows, heads, 512] in fp32; `threads` 0 means all hardware threads.
std::vector<float> mla_reference(const MlaProblem& p, int threads = 0);

struct ErrorSummary {
  double max_abs_err = 0;   // max |out - ref|
  double output_scale = 0;  // max |ref|
  double relative() const { return output_scale > 0 ? max_abs_err / output_scale : max_abs_err; }
  bool has_nan = false;
};

ErrorSummary compare_to_reference(const std::vector<uint16_t>& out_bf16, const std::vector<float>& ref);

}  // namespace mlasim::kernels
