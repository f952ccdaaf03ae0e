#include "mlasim/model/dtype.h"

#include "mlasim/model/input_error.h"

namespace mlasim {

std::string_view dtype_name(DType t) { return t == DType::fp8 ? "fp8" : "bf16"; }

DType parse_dtype(std::string_view text, const std::string& field) {
  if (text == "fp8" || text == "fp8_e4m3" || text == "fp8e4m3") return DType::fp8;
  if (text == "bf16" || text == "bfloat16") return DType::bf16;
  throw InputError(field, "must be fp8 or bf16, got '" + std::string(text) + "'");
}

}  // namespace mlasim
