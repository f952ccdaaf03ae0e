#pragma once
// Output helpers shared by the commands: a command builds its whole output first and writes it at once,
// so a bad input never leaves partial output behind.
#include <initializer_list>
#include <string>

namespace mlasim::cli {

void write_stdout(const std::string& text);
// Throws InputError("format", ...) unless `format` is one of `allowed`.
void check_format(const std::string& format, std::initializer_list<const char*> allowed);
// The date a written file's provenance records when the run names none: YYYY-MM-DD, UTC.
std::string today();

}  // namespace mlasim::cli
