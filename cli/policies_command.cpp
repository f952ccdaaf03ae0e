// mlasim policies: the registry of split policies, each with its kernel kind, what it does and its knobs (domain,
// default, what the knob sets), as text or JSON. Everything comes from the knob tables, so it is never stale.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "mlasim/sim/split_policy.h"
#include "output.h"

namespace mlasim::cli {
namespace {

using Kind = sim::KnobDomain::Alternative::Kind;

nlohmann::json alternative_json(const sim::KnobDomain::Alternative& a) {
  switch (a.kind) {
    case Kind::word: return {{"word", a.word}};
    case Kind::integers:
      return {{"integers", {{"min", static_cast<int64_t>(a.min)}, {"max", static_cast<int64_t>(a.max)}}}};
    case Kind::reals: return {{"reals", {{"min", a.min}, {"max", a.max}}}};
  }
  return nullptr;
}

nlohmann::json registry_json() {
  nlohmann::json policies = nlohmann::json::array();
  for (const sim::PolicyInfo& p : sim::policy_registry()) {
    nlohmann::json knobs = nlohmann::json::array();
    for (const sim::KnobInfo& k : p.knobs) {
      nlohmann::json alternatives = nlohmann::json::array();
      for (const auto& a : k.domain.alternatives()) alternatives.push_back(alternative_json(a));
      knobs.push_back({{"name", k.name},
                       {"domain", k.domain.describe()},
                       {"alternatives", std::move(alternatives)},
                       {"default", k.default_value},
                       {"doc", k.doc}});
    }
    policies.push_back({{"name", p.name},
                        {"kernel", std::string(sim::kernel_kind_name(p.kernel))},
                        {"doc", p.doc},
                        {"knobs", std::move(knobs)}});
  }
  return policies;
}

// One paragraph per policy: "NAME (KIND): doc", then per knob "NAME  DOMAIN; default VALUE" and its doc below.
std::string registry_text() {
  std::string out;
  for (const sim::PolicyInfo& p : sim::policy_registry()) {
    if (!out.empty()) out += "\n";
    out += p.name + " (" + std::string(sim::kernel_kind_name(p.kernel)) + "): " + p.doc + "\n";
    if (p.knobs.empty()) out += "  no knobs\n";
    for (const sim::KnobInfo& k : p.knobs)
      out += "  " + k.name + "  " + k.domain.describe() + "; default " + k.default_value + "\n      " + k.doc + "\n";
  }
  return out;
}

}  // namespace

void add_policies_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand("policies", "list the split policies and their knobs (domain, default, meaning)");
  cmd->add_option("--format", *format, "text or json")->capture_default_str();
  cmd->callback([format] {
    check_format(*format, {"text", "json"});
    write_stdout(*format == "json" ? registry_json().dump(2) + "\n" : registry_text());
  });
}

}  // namespace mlasim::cli
