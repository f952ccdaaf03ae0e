#pragma once
// Measurement files may be committed gzip-compressed (kernel traces, measured timelines): they are read whole and
// gunzipped when they start with gzip's magic bytes, so a reader takes either form.
#include <string>

namespace mlasim::validate {

// The whole file's bytes, gunzipped when they are gzip (InputError(field, ...) for an unreadable or broken file).
std::string read_maybe_gzip(const std::string& path, const std::string& field);

}  // namespace mlasim::validate
