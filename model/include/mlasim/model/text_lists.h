#pragma once
// Comma lists as users type them on the command line and in the explorer ("1,4,16", "mi355x,h100"), and the text
// around their items.
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

// Parses "1,2,3" into integers >= `min_value`; throws InputError naming `field`.
std::vector<int> parse_int_list(const std::string& text, const std::string& field, int min_value = 1);

// Splits "a,b,c" into non-empty names; throws InputError naming `field` for an empty item.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& field);

// "a, b, c": the names joined by `separator`, as messages list the allowed values.
std::string join_names(const std::vector<std::string>& names, std::string_view separator = ", ");

// `text` without the whitespace at either end.
std::string trim(std::string_view text);

}  // namespace mlasim
