#include "mlasim/validate/op_bytes.h"

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"

namespace mlasim::validate {

std::optional<OpBytes> OpBytesRules::of(const StepKernel& kernel, int requests) const {
  const std::string key = kernel.kernel_class + '\0' + kernel.name;
  auto it = matched_.find(key);
  if (it == matched_.end()) {
    int found = -1;
    for (size_t i = 0; i < entries.size() && found < 0; ++i)
      if (entries[i].selector(kernel)) found = static_cast<int>(i);
    it = matched_.emplace(key, found).first;
  }
  if (it->second < 0 || static_cast<size_t>(it->second) >= entries.size()) return std::nullopt;
  const OpBytesEntry& e = entries[static_cast<size_t>(it->second)];
  return OpBytes{(e.read_bytes + e.read_bytes_per_request * requests) / 1e6,
                 (e.written_bytes + e.written_bytes_per_request * requests) / 1e6};
}

namespace {

OpBytesRules op_bytes_of(const nlohmann::json& j, const std::string& origin) {
  constexpr double kMaxBytes = 1e15;  // a petabyte: past any GPU's memory
  if (!j.is_object()) throw InputError("op-bytes", "must be an object {description, ops: [{match, read_bytes, ...}]}");
  const JsonFields top(j, "", {"description", "ops"}, "op-bytes");
  OpBytesRules out;
  out.origin = origin;
  out.description = top.text("description", "");
  const nlohmann::json& ops = top.at("ops");
  if (!ops.is_array() || ops.empty())
    throw InputError("ops", "must be a non-empty list of {match, read_bytes, written_bytes}");
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string where = "ops[" + std::to_string(i) + "]";
    if (!ops[i].is_object()) throw InputError(where, "must be an object {match, read_bytes, written_bytes}");
    const JsonFields f(ops[i], where,
                       {"match", "read_bytes", "written_bytes", "read_bytes_per_request", "written_bytes_per_request"},
                       "op-bytes entry");
    const std::string match = check_step_selector(f.text("match", ""), f.name("match"));
    OpBytesEntry e{match,
                   StepSelector({match}),
                   f.real("read_bytes", 0, 0, kMaxBytes),
                   f.real("read_bytes_per_request", 0, 0, kMaxBytes),
                   f.real("written_bytes", 0, 0, kMaxBytes),
                   f.real("written_bytes_per_request", 0, 0, kMaxBytes)};
    out.entries.push_back(std::move(e));
  }
  return out;
}

}  // namespace

OpBytesRules op_bytes_from_json(const std::string& text, const std::string& origin) {
  return parse_file_json(parse_json_text(text, origin, "op-bytes"), origin, "op-bytes",
                         [&](const nlohmann::json& j) { return op_bytes_of(j, origin); });
}

OpBytesRules load_op_bytes(const std::string& path) {
  return op_bytes_from_json(read_text_file(path, "op-bytes"), path);
}

}  // namespace mlasim::validate
