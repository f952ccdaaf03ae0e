#pragma once
// Measurement files may be committed gzip-compressed (kernel traces, measured timelines): they are read whole and
// gunzipped when they start with gzip's magic bytes, so a reader takes either form.
#include <nlohmann/json.hpp>
#include <string>

namespace mlasim::validate {

// The whole file's bytes, gunzipped when they are gzip (InputError(field, ...) for an unreadable or broken file).
// A file of several gzip members (pigz, bgzip, concatenated files) is read whole.
std::string read_maybe_gzip(const std::string& path, const std::string& field);

// The file's JSON, plain or gzip-compressed; InputError(field, "PATH: not valid JSON (...)") otherwise.
nlohmann::json read_json_maybe_gzip(const std::string& path, const std::string& field);

}  // namespace mlasim::validate
