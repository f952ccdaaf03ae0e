#include "mlasim/sim/metric_fields.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <numeric>

namespace mlasim::sim {
namespace {

std::string splits_summary(const std::vector<int>& s) {
  if (s.size() <= 8) return fmt::format("{}", fmt::join(s, " "));
  const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  const double mean = std::accumulate(s.begin(), s.end(), 0.0) / double(s.size());
  return fmt::format("{}..{}, mean {:.2f} over {} requests", *lo, *hi, mean, s.size());
}

std::string signed_number(double v, int decimals) { return fmt::format("{}{:.{}f}", v >= 0 ? "+" : "", v, decimals); }

}  // namespace

double MetricField::value(const Metrics& m) const {
  switch (kind) {
    case Kind::real: return m.*real;
    case Kind::integer: return m.*integer;
    case Kind::list: break;
  }
  const auto& s = m.splits_per_request;
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(s.begin(), s.end(), 0.0) / double(s.size());
}

std::string MetricField::text(const Metrics& m) const {
  if (real == &Metrics::occupancy) return fmt::format("{:.1f} %", m.occupancy * 100);
  if (real == &Metrics::kv_bytes) return fmt::format("{:.1f} MB", m.kv_bytes / 1e6);
  switch (kind) {
    case Kind::real: return fmt::format("{:.2f}", m.*real);
    case Kind::integer: return fmt::format("{}", m.*integer);
    case Kind::list: break;
  }
  return splits_summary(m.splits_per_request);
}

std::string MetricField::cell(const Metrics& m) const {
  switch (kind) {
    case Kind::real: return fmt::format("{}", m.*real);
    case Kind::integer: return fmt::format("{}", m.*integer);
    case Kind::list: break;
  }
  return fmt::format("{}", fmt::join(m.splits_per_request, ";"));
}

std::string MetricField::compare(const Metrics& a, const Metrics& b) const {
  const double x = value(a), y = value(b);
  if (std::isnan(x) || std::isnan(y)) return {};
  switch (comparison) {
    case Comparison::time_ratio: return y > 0 ? fmt::format("{:.2f}x", x / y) : std::string();
    case Comparison::rate_ratio: return x > 0 ? fmt::format("{:.2f}x", y / x) : std::string();
    case Comparison::points: return signed_number((y - x) * 100, 1) + " pp";
    case Comparison::difference: return signed_number(y - x, 0);
    case Comparison::none: break;
  }
  return {};
}

std::span<const MetricField> metric_fields() {
  using K = MetricField::Kind;
  using C = MetricField::Comparison;

  static const MetricField fields[] = {
      {"stage1_us", "us", K::real, C::time_ratio, &Metrics::stage1_us},
      {"reduce_us", "us", K::real, C::time_ratio, &Metrics::reduce_us},
      {"kernel_us", "us", K::real, C::time_ratio, &Metrics::kernel_us},
      {"total_us", "us", K::real, C::time_ratio, &Metrics::total_us},
      {"active_clusters", "", K::integer, C::difference, nullptr, &Metrics::active_clusters},
      {"occupancy", "", K::real, C::points, &Metrics::occupancy},
      {"splits_per_request", "", K::list, C::none},
      {"num_works", "", K::integer, C::difference, nullptr, &Metrics::num_works},
      {"num_partials", "", K::integer, C::difference, nullptr, &Metrics::num_partials},
      {"kv_bytes", "B", K::real, C::rate_ratio, &Metrics::kv_bytes},
      {"achieved_tbps", "TB/s", K::real, C::rate_ratio, &Metrics::achieved_tbps},
      {"critical_path_us", "us", K::real, C::time_ratio, &Metrics::critical_path_us},
  };
  return fields;
}

const MetricField* find_metric_field(std::string_view name) {
  for (const MetricField& f : metric_fields())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace mlasim::sim
