#include "mlasim/model/json_fields.h"

#include <string>
#include <vector>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"

namespace mlasim {

using nlohmann::json;

json read_json_file(const std::string& path, const std::string& field) {
  return parse_json_text(read_text_file(path, field), path, field);
}

json parse_json_text(const std::string& text, const std::string& path, const std::string& field) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number beyond double ("2e766")
    throw InputError(field, path + ": not valid JSON (" + e.what() + ")");
  }
}

JsonFields::JsonFields(const json& j, std::string path, std::set<std::string> known, std::string what)
    : j_(j), path_(std::move(path)) {
  if (!j_.is_object())
    throw InputError(path_.empty() ? what : path_, "must be a JSON object, got " + std::string(j_.type_name()));
  for (const auto& [key, value] : j_.items()) {
    if (known.count(key)) continue;
    throw InputError(name(key), "is not a " + what + " field here; allowed: " +
                                    join_names(std::vector<std::string>(known.begin(), known.end())));
  }
}

const json& JsonFields::at(const std::string& key) const {
  if (!has(key)) throw InputError(name(key), "is missing");
  return j_.at(key);
}

std::string JsonFields::text(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_string()) throw InputError(name(key), "must be a string, got " + std::string(v.type_name()));
  return v.get<std::string>();
}

int JsonFields::integer(const std::string& key, int fallback, int min_value, int max_value) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_number_integer()) throw InputError(name(key), "must be an integer, got " + v.dump());
  const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX} ? INT64_MAX : v.get<int64_t>();
  if (x < min_value || x > max_value)
    throw InputError(name(key),
                     "must be " + std::to_string(min_value) + ".." + std::to_string(max_value) + ", got " + v.dump());
  return static_cast<int>(x);
}

double JsonFields::real(const std::string& key, double fallback, double min_value, double max_value) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_number()) throw InputError(name(key), "must be a number, got " + v.dump());
  const double x = v.get<double>();
  if (!(x >= min_value && x <= max_value))
    throw InputError(name(key),
                     "must be in [" + json(min_value).dump() + ", " + json(max_value).dump() + "], got " + v.dump());
  return x;
}

bool JsonFields::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_boolean()) throw InputError(name(key), "must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::vector<int> JsonFields::integers(const std::string& key, int min_value, int max_value, size_t max_items) const {
  const json& list = at(key);
  if (!list.is_array() || list.empty() || list.size() > max_items)
    throw InputError(name(key), "must be a list of 1.." + std::to_string(max_items) + " integers");
  std::vector<int> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    if (!v.is_number_integer() || v.get<int64_t>() < min_value || v.get<int64_t>() > max_value)
      throw InputError(name(key), "entry " + std::to_string(i) + " must be an integer " + std::to_string(min_value) +
                                      ".." + std::to_string(max_value) + ", got " + v.dump());
    out.push_back(v.get<int>());
  }
  return out;
}

}  // namespace mlasim
