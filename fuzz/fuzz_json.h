#pragma once
// JSON targets: the fuzz bytes parsed as JSON the way the file loaders do (nlohmann::json::parse); text that is
// not JSON is the loaders' own "not valid JSON" InputError, so those inputs stop here.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

namespace mlasim::fuzz {

inline std::optional<nlohmann::json> parse_json(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace mlasim::fuzz
