#include "output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mlasim/model/input_error.h"

namespace mlasim::cli {

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError("out", "cannot write '" + path + "'");
    out << text;
    if (!out.flush()) {
      std::filesystem::remove(tmp);
      throw InputError("out", "cannot write '" + path + "'");
    }
  }
  std::filesystem::rename(tmp, path);
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
