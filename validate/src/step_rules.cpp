#include "mlasim/validate/step_rules.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/validate/name_regex.h"

namespace mlasim::validate {
namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string>& step_classes() {
  static const std::vector<std::string> classes = {"q_prep", "rope_kv_write", "metadata",   "kv_indices",
                                                   "copy",   "mla_stage1",    "mla_reduce", "other"};
  return classes;
}

void check_step_class(const std::string& name, const std::string& field, const std::string& other_forms) {
  const auto& c = step_classes();
  if (std::find(c.begin(), c.end(), name) != c.end()) return;
  throw InputError(field, "must be a step class (" + join_names(c) + ")" +
                              (other_forms.empty() ? "" : " or " + other_forms) + ", got '" + name + "'");
}

std::string BatchFromGrid::describe() const {
  if (match.empty()) return "";
  std::string out = std::string("grid.") + "xyz"[axis] + " of /" + match + "/";
  if (divide_by != 1) out += " / " + std::to_string(divide_by);
  if (counts_tokens) out += " tokens";
  return out;
}

bool BatchFromGrid::matches(const std::string& kernel_name) const {
  return !match.empty() && std::regex_search(kernel_name.substr(0, StepRules::kMaxMatchedChars), pattern);
}

namespace {

BatchFromGrid batch_from_json(const json& j) {
  if (!j.is_object()) throw InputError("batch_from", "must be an object {match, grid_axis, divide_by, counts}");
  const JsonFields f(j, "batch_from", {"match", "grid_axis", "divide_by", "counts"}, "batch_from");
  BatchFromGrid b;
  b.match = f.text("match", "");
  b.pattern = name_regex(b.match, f.name("match"));
  const std::string axis = f.text("grid_axis", "x");
  if (axis != "x" && axis != "y" && axis != "z")
    throw InputError(f.name("grid_axis"), "must be x, y or z, got '" + axis + "'");
  b.axis = axis[0] - 'x';
  b.divide_by = f.integer("divide_by", 1, 1, 1 << 20);
  const std::string counts = f.text("counts", "requests");
  if (counts != "requests" && counts != "tokens")
    throw InputError(f.name("counts"), "must be requests or tokens, got '" + counts + "'");
  b.counts_tokens = counts == "tokens";
  return b;
}

}  // namespace

const std::string& StepRules::classify(const std::string& kernel_name) const {
  if (const auto it = cache_.find(kernel_name); it != cache_.end()) return it->second;
  static const std::string other = "other";
  const std::string* found = &other;
  // Names are matched on their first kMaxMatchedChars characters: a kernel's own name comes first (template
  // arguments follow), and std::regex's backtracking grows with the text it searches.
  const std::string head = kernel_name.substr(0, kMaxMatchedChars);
  for (const StepRule& r : rules)
    if (std::regex_search(head, r.pattern)) {
      found = &r.kernel_class;
      break;
    }
  return cache_.emplace(kernel_name, *found).first->second;
}

StepRules step_rules_from_json(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError("rules", origin + ": is not valid JSON (" + e.what() + ")");
  }
  try {
    if (!j.is_object()) throw InputError("rules", "must be an object {name, description, sources, rules}");
    const JsonFields r(j, "", {"name", "description", "sources", "rules", "batch_from"}, "step rules");
    StepRules out;
    out.name = r.text("name", "");
    if (out.name.empty()) throw InputError("name", "must name the rule set");
    out.description = r.text("description", "");
    const json& list = r.at("rules");
    if (!list.is_array() || list.empty()) throw InputError("rules", "must be a non-empty list of {class, match}");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = "rules[" + std::to_string(i) + "]";
      if (!list[i].is_object()) throw InputError(path, "must be an object {class, match}");
      const JsonFields rule(list[i], path, {"class", "match"}, "step rule");
      StepRule s;
      s.kernel_class = rule.text("class", "");
      check_step_class(s.kernel_class, rule.name("class"));
      if (s.kernel_class == "other") throw InputError(rule.name("class"), "other is what no rule matches");
      s.match = rule.text("match", "");
      s.pattern = name_regex(s.match, rule.name("match"));
      out.rules.push_back(std::move(s));
    }
    if (j.contains("batch_from")) out.batch_from = batch_from_json(j.at("batch_from"));
    return out;
  } catch (const InputError& e) {
    throw InputError("rules", origin + ": " + e.what());
  }
}

std::vector<std::string> step_rule_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir()) / "step", ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

StepRules load_step_rules(const std::string& name_or_path) {
  const bool is_path = name_or_path.ends_with(".json");
  const std::string path = is_path ? name_or_path : (fs::path(data_dir()) / "step" / (name_or_path + ".json")).string();
  if (!is_path && !fs::exists(path)) {
    throw InputError("rules", "unknown rule set '" + name_or_path + "'; known: " + join_names(step_rule_names()) +
                                  " (or a path to a .json)");
  }
  return step_rules_from_json(read_text_file(path, "rules"), path);
}

}  // namespace mlasim::validate
