#include "mlasim/model/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "mlasim/model/input_error.h"

namespace mlasim {

std::string read_text_file(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(field, path + ": cannot read");
  return text.str();
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& field) {
  // The temporary name carries the process id, so two runs writing the same file never share a temporary.
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw InputError(field, path + ": cannot write (" + why + ")");
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) fail("write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail(ec.message());
}

void check_writable(const std::string& path, const std::string& field) {
  std::error_code ec;
  if (path.empty()) throw InputError(field, "needs a file name");
  if (std::filesystem::is_directory(path, ec)) throw InputError(field, path + ": cannot write (it is a folder)");
  const std::string probe = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(field, path + ": cannot write (" + std::strerror(errno) + ")");
  }
  std::filesystem::remove(probe, ec);
}

}  // namespace mlasim
