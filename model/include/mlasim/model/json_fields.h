#pragma once
// Reads the fields of one JSON object, naming each by its path ("workload.batch.count") in errors, and rejects
// keys it does not know, so a typo or a file of another kind is reported instead of silently ignored.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "mlasim/model/input_error.h"

namespace mlasim {

// The JSON of a file, read with `parse` (a function of the JSON), every error naming the file:
// InputError(field, "PATH: cannot read (...)" | "PATH: not valid JSON (...)" | "PATH: <parse's error>").
template <typename Parse>
auto parse_json_file(const std::string& path, const std::string& field, Parse parse)
    -> decltype(parse(nlohmann::json{}));
nlohmann::json read_json_file(const std::string& path, const std::string& field);
// The JSON of `text`, the contents of `path` however they were read (plain, decompressed):
// InputError(field, "PATH: not valid JSON (...)").
nlohmann::json parse_json_text(const std::string& text, const std::string& path, const std::string& field);
// `parse` of `j`, the JSON of the file `path`, its errors naming the file: InputError(field, "PATH: <its error>").
template <typename Parse>
auto parse_file_json(const nlohmann::json& j, const std::string& path, const std::string& field, Parse parse)
    -> decltype(parse(j));

class JsonFields {
 public:
  // `path` is the object's own path ("" at the top); `what` names the kind of file in the unknown-key message.
  JsonFields(const nlohmann::json& j, std::string path, std::set<std::string> known, std::string what = "field");

  bool has(const std::string& key) const { return j_.contains(key); }
  const nlohmann::json& at(const std::string& key) const;  // InputError "<path.key>: is missing"
  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string text(const std::string& key, const std::string& fallback) const;
  int integer(const std::string& key, int fallback, int min_value, int max_value) const;
  double real(const std::string& key, double fallback, double min_value, double max_value) const;
  bool boolean(const std::string& key, bool fallback) const;
  // A list of integers in [min_value, max_value] with 1..max_items entries.
  std::vector<int> integers(const std::string& key, int min_value, int max_value, size_t max_items) const;

 private:
  const nlohmann::json& j_;
  std::string path_;
};

template <typename Parse>
auto parse_json_file(const std::string& path, const std::string& field, Parse parse)
    -> decltype(parse(nlohmann::json{})) {
  return parse_file_json(read_json_file(path, field), path, field, parse);
}

template <typename Parse>
auto parse_file_json(const nlohmann::json& j, const std::string& path, const std::string& field, Parse parse)
    -> decltype(parse(j)) {
  try {
    return parse(j);
  } catch (const InputError& e) {
    throw InputError(field, path + ": " + e.what());
  }
}

}  // namespace mlasim
