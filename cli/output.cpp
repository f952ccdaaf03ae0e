#include "output.h"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim::cli {

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void check_format(const std::string& format, std::initializer_list<const char*> allowed) {
  std::vector<std::string> names;
  for (const char* a : allowed) {
    if (format == a) return;
    names.emplace_back(a);
  }
  throw InputError("format", "must be " + join_names(names) + ", got '" + format + "'");
}

std::string today() {
  const std::chrono::year_month_day d{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(d.year()), static_cast<unsigned>(d.month()),
                     static_cast<unsigned>(d.day()));
}

}  // namespace mlasim::cli
