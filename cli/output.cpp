#include "output.h"

#include <cstdio>

#include "mlasim/model/input_error.h"

namespace mlasim::cli {

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void check_format(const std::string& format, std::initializer_list<const char*> allowed) {
  std::string names;
  for (const char* a : allowed) {
    if (format == a) return;
    names += (names.empty() ? "" : ", ") + std::string(a);
  }
  throw InputError("format", "must be " + names + ", got '" + format + "'");
}

}  // namespace mlasim::cli
