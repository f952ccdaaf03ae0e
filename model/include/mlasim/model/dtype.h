#pragma once
// Element types of Q and the KV cache.
#include <string>
#include <string_view>

namespace mlasim {

enum class DType { fp8, bf16 };

// Bytes per element: fp8 (e4m3) is 1, bf16 is 2.
constexpr int dtype_bytes(DType t) { return t == DType::fp8 ? 1 : 2; }

std::string_view dtype_name(DType t);

// Parses "fp8" or "bf16" (also "fp8_e4m3", "bfloat16"); throws InputError naming `field`.
DType parse_dtype(std::string_view text, const std::string& field);

}  // namespace mlasim
