#pragma once
// Comma lists as users type them on the command line and in the explorer ("1,4,16", "mi355x,h100").
#include <string>
#include <vector>

namespace mlasim {

// Parses "1,2,3" into integers >= `min_value`; throws InputError naming `field`.
std::vector<int> parse_int_list(const std::string& text, const std::string& field, int min_value = 1);

// Splits "a,b,c" into non-empty names; throws InputError naming `field` for an empty item.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& field);

}  // namespace mlasim
