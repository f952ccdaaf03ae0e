#pragma once
// What a policy knob accepts, as data: an ordered list of alternatives, each a word ("auto", "vllm"), one
// integer, an integer range or a real range. "-1, vllm or 1..4096" is three alternatives; the check of a value,
// the error message, `mlasim policies` and the GUI's editors all read the list, so no knob needs code of its own.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlasim::sim {

// A value a domain accepted: one of its words, an integer or a real number.
using KnobValue = std::variant<std::string, int64_t, double>;

class KnobDomain {
 public:
  struct Alternative {
    enum class Kind { word, integers, reals };
    Kind kind = Kind::word;
    std::string word;         // Kind::word
    double min = 0, max = 0;  // Kind::integers and Kind::reals: the inclusive range (min == max: one number)
  };

  static Alternative word(std::string w);
  static Alternative integer(int64_t value);
  static Alternative integers(int64_t min, int64_t max);
  static Alternative reals(double min, double max);

  KnobDomain(std::initializer_list<Alternative> alternatives);

  const std::vector<Alternative>& alternatives() const { return alternatives_; }

  // The alternatives in order, e.g. "-1, vllm or 1..4096", "sqrt or width", "0.01..100".
  std::string describe() const;

  // The value `text` stands for, or nullopt when the domain does not hold it. A word matches as written; a
  // number must be written whole ("16", "1.2") and lie in one of the ranges of its kind.
  std::optional<KnobValue> parse(std::string_view text) const;

  // Every value can be listed: the domain holds words and single integers only.
  bool is_finite() const;

  // The range of a domain that is one integer or real range and nothing else (a spin box suits it).
  const Alternative* sole_range() const;

 private:
  std::vector<Alternative> alternatives_;
};

// A number as the messages and the tables write it: integers without a decimal point, reals in their shortest
// round-tripping form ("0.01", "1.2").
std::string format_knob_number(double value);

}  // namespace mlasim::sim
