#pragma once
// The public table of predicted metrics: one entry per Metrics member, in output order, with its unit, its
// number and its text. Every writer (text, JSON, CSV) and every view (the explorer's metrics table, `compare`)
// iterates this table; nobody formats a metric by hand or parses a formatted one back.
//
//   for (const MetricField& f : metric_fields()) fmt::print("{} = {} {}\n", f.name, f.text(m), f.unit);
#include <span>
#include <string>
#include <string_view>

#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

struct MetricField {
  enum class Kind { real, integer, list };
  // How B compares with A in a side-by-side view: times as A / B (above 1: B faster), rates as B / A,
  // fractions as B - A in percentage points, counts as B - A; lists are not compared.
  enum class Comparison { time_ratio, rate_ratio, points, difference, none };

  std::string_view name;  // also the JSON key and CSV column
  std::string_view unit;  // "us", "B", "TB/s", "" for counts and fractions
  Kind kind;
  Comparison comparison;
  double Metrics::*real = nullptr;
  int Metrics::*integer = nullptr;

  // The number (a list's mean; NaN for an empty list).
  double value(const Metrics& m) const;
  // As a person reads it: "45.10", "99.8 %", "2.1 MB", "65 65 65 65" or "1..4, mean 1.53 over 1024 requests".
  std::string text(const Metrics& m) const;
  // The CSV cell: shortest exact form, so a row reads back bit for bit; a list as ';'-separated counts.
  std::string cell(const Metrics& m) const;
  // B against A (`comparison` above), e.g. "2.54x", "+74.9 pp", "+3"; "" where undefined (a zero divisor).
  std::string compare(const Metrics& a, const Metrics& b) const;
};

std::span<const MetricField> metric_fields();
// The field named `name`, or nullptr.
const MetricField* find_metric_field(std::string_view name);

}  // namespace mlasim::sim
