#include "mlasim/validate/name_regex.h"

#include <algorithm>

#include "mlasim/model/input_error.h"

namespace mlasim::validate {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The counts of a pattern: the digits that open or follow the comma of an interval {n,m} outside a bracket, and
// those after a backslash (a back-reference). A bracket is taken to end at its first unescaped ']', as ECMAScript
// ends it; where that is early (a [[:class:]]), more digits are checked, never fewer.
void check_counts(const std::string& text, const std::string& field) {
  bool in_bracket = false, in_interval = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    size_t digits = std::string::npos;
    if (c == '\\' && i + 1 < text.size()) {
      if (is_digit(text[i + 1]))
        digits = i + 1;
      else {
        ++i;  // an escaped character is never a bracket or interval mark
        continue;
      }
    } else if (in_bracket) {
      in_bracket = c != ']';
      continue;
    } else if (c == '[') {
      in_bracket = true;
      continue;
    } else if (c == '{') {
      in_interval = true;
      digits = i + 1;
    } else if (c == ',' && in_interval) {
      digits = i + 1;
    } else if (c == '}') {
      in_interval = false;
    }
    if (digits == std::string::npos) continue;
    size_t end = digits;
    long value = 0;
    for (; end < text.size() && is_digit(text[end]); ++end) {
      value = value * 10 + (text[end] - '0');
      if (value > kMaxNameRegexCount)
        throw InputError(field, "takes repetition counts and back-references of at most " +
                                    std::to_string(kMaxNameRegexCount) + ", got '" +
                                    text.substr(digits, std::min<size_t>(end + 1 - digits, 24)) + "...'");
    }
    if (end > digits) i = end - 1;
  }
}

}  // namespace

std::regex name_regex(const std::string& text, const std::string& field) {
  if (text.empty() || text.size() > kMaxNameRegexChars)
    throw InputError(field, "must be a regular expression of 1.." + std::to_string(kMaxNameRegexChars) + " characters");
  check_counts(text, field);
  try {
    return std::regex(text, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw InputError(field, "is not a valid regular expression (" + std::string(e.what()) + ")");
  }
}

}  // namespace mlasim::validate
