#include "mlasim/model/text_lists.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "mlasim/model/input_error.h"

namespace mlasim {
namespace {

// The items between commas, empty ones included ("" is one empty item).
std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<int> parse_int_list(const std::string& text, const std::string& field, int min_value) {
  std::vector<int> out;
  for (const std::string& item : comma_items(text)) {
    int v = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < min_value)
      throw InputError(field, "must be a comma list of integers >= " + std::to_string(min_value) + ", got '" + item +
                                  "' in '" + text + "'");
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> parse_name_list(const std::string& text, const std::string& field) {
  std::vector<std::string> out = comma_items(text);
  for (const std::string& name : out)
    if (name.empty()) throw InputError(field, "must be a comma list of names, got '" + text + "'");
  return out;
}

std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

}  // namespace mlasim
