#pragma once
// A policy's knobs: each declared once (KnobInfo, a row of the registry's table), and the validated, typed values
// one spec gives them (KnobValues), which is all a policy reads.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlasim/sim/knob_domain.h"
#include "mlasim/sim/policy_spec.h"

namespace mlasim::sim {

// One knob of a policy: it drives validation, `mlasim policies`, the CLI help and the GUI form.
struct KnobInfo {
  std::string name;
  KnobDomain domain;
  std::string default_value;  // a value of `domain`, as a spec writes it
  std::string doc;
};

// The values of every knob of one policy for one spec: what the spec gave, else the default, each checked
// against its domain. The words that mean "derived from the workload" (auto, vllm, all) read as std::nullopt.
class KnobValues {
 public:
  // Checks `spec`'s knobs against `knobs` and fills in the defaults. Throws InputError("policy", ...) for a knob
  // the table does not declare and InputError(<knob>, "must be <domain>, got <value>") for a value outside its
  // domain.
  KnobValues(const std::vector<KnobInfo>& knobs, const PolicySpec& spec);

  // The spec these values came from (name and knobs as written).
  const PolicySpec& spec() const { return spec_; }

  // A knob that holds an integer, as T. Throws std::logic_error when the table and the policy disagree (the knob
  // is not declared, holds no integer, or its domain does not fit T).
  template <typename T = int64_t>
  T integer(const std::string& knob) const {
    return narrow<T>(knob, integer_of(knob, value(knob)));
  }
  // A knob whose domain is integers and one word that means "derived from the workload": nullopt for the word.
  template <typename T = int64_t>
  std::optional<T> integer_or_derived(const std::string& knob) const {
    const KnobValue& v = value(knob);
    if (std::holds_alternative<std::string>(v)) return std::nullopt;
    return narrow<T>(knob, integer_of(knob, v));
  }
  double real(const std::string& knob) const;
  const std::string& word(const std::string& knob) const;

 private:
  const KnobValue& value(const std::string& knob) const;
  static int64_t integer_of(const std::string& knob, const KnobValue& v);
  template <typename T>
  static T narrow(const std::string& knob, int64_t v) {
    if (!std::in_range<T>(v)) mismatch(knob, "does not fit the policy's integer type");
    return static_cast<T>(v);
  }
  [[noreturn]] static void mismatch(const std::string& knob, const std::string& what);

  PolicySpec spec_;
  std::map<std::string, KnobValue> values_;
};

}  // namespace mlasim::sim
