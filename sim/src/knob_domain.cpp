#include "mlasim/sim/knob_domain.h"

#include <charconv>
#include <cmath>
#include <exception>

namespace mlasim::sim {
namespace {

using Kind = KnobDomain::Alternative::Kind;

std::optional<int64_t> whole_integer(std::string_view s) {
  int64_t x = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, x);
  if (ec != std::errc() || p != end) return std::nullopt;
  return x;
}

std::optional<double> whole_real(std::string_view s) {
  try {
    size_t used = 0;
    const double x = std::stod(std::string(s), &used);
    if (used != s.size() || !std::isfinite(x)) return std::nullopt;
    return x;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool holds(const KnobDomain::Alternative& a, double x) { return x >= a.min && x <= a.max; }

std::string alternative_text(const KnobDomain::Alternative& a) {
  if (a.kind == Kind::word) return a.word;
  if (a.min == a.max) return format_knob_number(a.min);
  return format_knob_number(a.min) + ".." + format_knob_number(a.max);
}

}  // namespace

std::string format_knob_number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

KnobDomain::Alternative KnobDomain::word(std::string w) { return {Kind::word, std::move(w), 0, 0}; }

KnobDomain::Alternative KnobDomain::integer(int64_t value) { return integers(value, value); }

KnobDomain::Alternative KnobDomain::integers(int64_t min, int64_t max) {
  return {Kind::integers, "", static_cast<double>(min), static_cast<double>(max)};
}

KnobDomain::Alternative KnobDomain::reals(double min, double max) { return {Kind::reals, "", min, max}; }

KnobDomain::KnobDomain(std::initializer_list<Alternative> alternatives) : alternatives_(alternatives) {}

std::string KnobDomain::describe() const {
  std::string s;
  for (size_t i = 0; i < alternatives_.size(); ++i) {
    if (i > 0) s += i + 1 == alternatives_.size() ? " or " : ", ";
    s += alternative_text(alternatives_[i]);
  }
  return s;
}

std::optional<KnobValue> KnobDomain::parse(std::string_view text) const {
  for (const Alternative& a : alternatives_)
    if (a.kind == Kind::word && a.word == text) return KnobValue{a.word};
  if (const auto x = whole_integer(text))
    for (const Alternative& a : alternatives_)
      if (a.kind == Kind::integers && holds(a, static_cast<double>(*x))) return KnobValue{*x};
  if (const auto x = whole_real(text))
    for (const Alternative& a : alternatives_)
      if (a.kind == Kind::reals && holds(a, *x)) return KnobValue{*x};
  return std::nullopt;
}

bool KnobDomain::is_finite() const {
  for (const Alternative& a : alternatives_)
    if (a.kind == Kind::reals || (a.kind == Kind::integers && a.min != a.max)) return false;
  return true;
}

const KnobDomain::Alternative* KnobDomain::sole_range() const {
  if (alternatives_.size() != 1 || alternatives_[0].kind == Kind::word) return nullptr;
  return &alternatives_[0];
}

}  // namespace mlasim::sim
