#pragma once
// The median of a sample: the middle value, or the mean of the middle two for an even count; 0 for none.
#include <algorithm>
#include <vector>

namespace mlasim {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace mlasim
