#pragma once
// The regular expressions users write to pick kernels by name (step rules' "match", the step what-if's re:SEL):
// ECMAScript, checked before std::regex compiles them, so a bad one is one input error and never undefined
// behaviour or a runaway compile.
#include <cstddef>
#include <regex>
#include <string>

namespace mlasim::validate {

inline constexpr size_t kMaxNameRegexChars = 256;  // a pattern's length
inline constexpr long kMaxNameRegexCount = 1000;   // a repetition count {n,m} or a back-reference \n

// Throws InputError(field, ...) for an empty or over-long pattern, a count past kMaxNameRegexCount (libstdc++ reads
// counts into a long without an overflow check and copies the repeated expression that many times) or a pattern
// std::regex rejects; otherwise returns it compiled.
std::regex name_regex(const std::string& text, const std::string& field);

}  // namespace mlasim::validate
