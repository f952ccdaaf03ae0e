#include "mlasim/validate/measurement_sessions.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <unordered_map>

namespace mlasim::validate {
namespace {

// The median of the values the sessions have (empty when none has one).
std::optional<double> median_of(const std::vector<const MeasurementRow*>& rows,
                                std::optional<double> MeasurementRow::*field) {
  std::vector<double> v;
  for (const MeasurementRow* r : rows)
    if (r->*field) v.push_back(*(r->*field));
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::string workload_key(const MeasurementRow& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", r.gpu, fmt::join(r.lengths(), ","), r.heads, r.qo_len,
                     dtype_name(r.q_dtype), dtype_name(r.kv_dtype), r.page_size, r.clusters, r.topk);
}

std::string configuration_key(const MeasurementRow& r) {
  return r.config_id.empty() ? workload_key(r) + "|" + r.policy + "|" + r.vs_policy : r.campaign + "|" + r.config_id;
}

SessionMedian median_over_sessions(const std::vector<MeasurementRow>& rows) {
  std::vector<std::vector<const MeasurementRow*>> groups;
  std::unordered_map<std::string, size_t> index;
  for (const MeasurementRow& r : rows) {
    const auto [it, added] = index.try_emplace(configuration_key(r), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  SessionMedian out;
  for (const auto& g : groups) out.max_sessions = std::max(out.max_sessions, static_cast<int>(g.size()));
  for (const auto& g : groups) {
    MeasurementRow m = *g.front();
    out.in_every_session += static_cast<int>(g.size()) == out.max_sessions;
    if (g.size() > 1) {
      for (auto field : {&MeasurementRow::stage1_us, &MeasurementRow::reduce_us, &MeasurementRow::kernel_us,
                         &MeasurementRow::kv_tbps, &MeasurementRow::time_ratio})
        m.*field = median_of(g, field);
      m.source = fmt::format("median of {} sessions{}{}", g.size(), m.source.empty() ? "" : "; first: ", m.source);
    }
    out.rows.push_back(std::move(m));
  }
  return out;
}

}  // namespace mlasim::validate
