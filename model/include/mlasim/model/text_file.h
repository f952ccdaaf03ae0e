#pragma once
// Whole-file reads and writes. A write goes through a temporary file in the same folder renamed into place, so
// readers (and a run that is killed) see the old file or the new one, never a part.
#include <string>

namespace mlasim {

// The file's bytes; throws InputError(field, "PATH: cannot read (...)").
std::string read_text_file(const std::string& path, const std::string& field);

// Throws InputError(field, "PATH: cannot write (...)"); on failure the old file (if any) is left as it was.
void write_file_atomically(const std::string& path, const std::string& text, const std::string& field = "out");

// Throws InputError(field, "PATH: cannot write (...)") unless write_file_atomically(path, ...) could succeed now:
// the folder exists and takes a new file, and PATH is not a folder. Commands call it before their work, so a
// run never computes everything and then finds it cannot save the result. Leaves nothing behind.
void check_writable(const std::string& path, const std::string& field = "out");

}  // namespace mlasim
