#pragma once
// The one CSV quoter every writer uses (RFC 4180): a cell with a comma, quote or line break is quoted.
#include <string>
#include <string_view>

namespace mlasim {

std::string csv_cell(std::string_view text);

}  // namespace mlasim
