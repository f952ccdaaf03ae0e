#include "mlasim/validate/error_report.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "mlasim/model/median.h"
#include "mlasim/sim/policy_spec.h"
#include "mlasim/sim/workload.h"
#include "mlasim/validate/measurement_sessions.h"

namespace mlasim::validate {
namespace {

// Bands of a size, so slices read "1k-4k" rather than one slice per value.
std::string band(double v, const std::vector<std::pair<double, const char*>>& edges) {
  for (const auto& [edge, name] : edges)
    if (v < edge) return name;
  return edges.back().second;
}

std::string context_band(const MeasurementRow& r) {
  const std::vector<int> lens = r.lengths();
  double mean = 0;
  for (int l : lens) mean += l;
  mean /= static_cast<double>(std::max<size_t>(lens.size(), 1));
  return band(mean, {{1024, "<1k"}, {8192, "1k-8k"}, {32768, "8k-32k"}, {1e18, ">=32k"}});
}

std::string measured_band(double us) {
  return band(us, {{20, "<20us"}, {100, "20-100us"}, {500, "100-500us"}, {1e18, ">=500us"}});
}

struct TimedRow {
  const PreparedRow* row;
  double measured, predicted;
};

// The kernel_us rows of each workload measured under two or more policies.
std::vector<std::vector<TimedRow>> workload_groups(const CalibrationRun& run) {
  std::map<std::string, std::vector<TimedRow>> groups;
  for (const RowFit& f : run.result.rows) {
    const PreparedRow& p = run.rows[f.row];
    if (p.target != "kernel_us") continue;
    groups[workload_key(p.row)].push_back({&p, f.measured_us, f.predicted_us});
  }
  std::vector<std::vector<TimedRow>> out;
  for (auto& [key, rows] : groups)
    if (rows.size() >= 2) out.push_back(std::move(rows));
  return out;
}

nlohmann::ordered_json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},       {"mape_pct", s.mape_pct}, {"p50_pct", s.p50_pct},
          {"p90_pct", s.p90_pct}, {"max_pct", s.max_pct},   {"mean_signed_pct", s.mean_signed_pct}};
}

}  // namespace

ErrorStats error_stats(const std::vector<double>& errors) {
  ErrorStats s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) {
    abs.push_back(std::abs(e));
    s.mean_signed_pct += e;
  }
  s.mean_signed_pct /= static_cast<double>(errors.size());
  for (double a : abs) s.mape_pct += a;
  s.mape_pct /= static_cast<double>(abs.size());
  s.p50_pct = percentile(abs, 0.5);
  s.p90_pct = percentile(abs, 0.9);
  s.max_pct = *std::max_element(abs.begin(), abs.end());
  return s;
}

std::string kernel_class(const PreparedRow& row) { return mlasim::kernel_class(row.kernel).name; }

std::vector<SliceTable> error_slices(const CalibrationRun& run, bool held_out_only) {
  using Key = std::string (*)(const PreparedRow&);
  const std::vector<std::pair<const char*, Key>> slicings = {
      {"policy", [](const PreparedRow& p) { return sim::parse_policy_spec(p.row.policy).name; }},
      {"policy spec", [](const PreparedRow& p) { return p.plan.policy; }},
      {"kernel class", [](const PreparedRow& p) { return kernel_class(p); }},
      {"heads", [](const PreparedRow& p) { return std::to_string(p.row.heads); }},
      {"qlen", [](const PreparedRow& p) { return std::to_string(p.row.qo_len); }},
      {"context", [](const PreparedRow& p) { return context_band(p.row); }},
      {"kv dtype", [](const PreparedRow& p) { return std::string(dtype_name(p.row.kv_dtype)); }},
      {"page size", [](const PreparedRow& p) { return std::to_string(p.row.page_size); }},
      {"clusters",
       [](const PreparedRow& p) { return p.row.clusters == 0 ? std::string("all") : std::to_string(p.row.clusters); }},
      {"batch",
       [](const PreparedRow& p) { return p.row.kv_lens.empty() ? std::string("uniform") : std::string("ragged"); }},
      {"measured", [](const PreparedRow& p) { return measured_band(p.measured_us); }},
  };
  std::vector<SliceTable> tables;
  for (const auto& [by, key] : slicings) {
    std::map<std::string, std::vector<double>> errors;
    for (const RowFit& f : run.result.rows)
      if (!held_out_only || f.held_out) errors[key(run.rows[f.row])].push_back(f.error_pct);
    SliceTable t{by, {}};
    for (const auto& [name, e] : errors) t.slices.push_back({name, error_stats(e)});
    tables.push_back(std::move(t));
  }
  return tables;
}

namespace {

// Pair statistics of the pairs `keep` accepts.
template <typename Keep>
PairStats pair_stats(const CalibrationRun& run, Keep keep) {
  std::vector<double> errors;
  int differing = 0, named = 0;
  for (const auto& group : workload_groups(run))
    for (size_t i = 0; i < group.size(); ++i)
      for (size_t j = i + 1; j < group.size(); ++j) {
        if (!keep(group[i], group[j])) continue;
        const double measured = group[i].measured / group[j].measured;
        const double predicted = group[i].predicted / group[j].predicted;
        errors.push_back(100.0 * std::abs(predicted / measured - 1.0));
        if (std::abs(measured - 1.0) >= 0.1 && std::abs(1.0 / measured - 1.0) >= 0.1) {
          ++differing;
          named += (measured > 1) == (predicted > 1);
        }
      }
  PairStats s;
  s.pairs = static_cast<int>(errors.size());
  s.median_abs_error_pct = percentile(errors, 0.5);
  s.p90_abs_error_pct = percentile(errors, 0.9);
  s.differing_pairs = differing;
  s.faster_named_pct = differing ? 100.0 * named / differing : 0;
  return s;
}

nlohmann::ordered_json pair_json(const PairStats& p) {
  return {{"pairs", p.pairs},
          {"median_abs_error_pct", p.median_abs_error_pct},
          {"p90_abs_error_pct", p.p90_abs_error_pct},
          {"differing_pairs", p.differing_pairs},
          {"faster_named_pct", p.faster_named_pct}};
}

}  // namespace

PairStats speedup_pairs(const CalibrationRun& run) {
  return pair_stats(run, [](const TimedRow&, const TimedRow&) { return true; });
}

std::map<std::string, PairStats> speedup_pairs_by_class(const CalibrationRun& run) {
  std::set<std::string> classes;
  for (const RowFit& f : run.result.rows) classes.insert(kernel_class(run.rows[f.row]));
  std::map<std::string, PairStats> out;
  for (const std::string& c : classes) {
    const PairStats s = pair_stats(run, [&](const TimedRow& a, const TimedRow& b) {
      return kernel_class(*a.row) == c && kernel_class(*b.row) == c;
    });
    if (s.pairs > 0) out[c] = s;
  }
  return out;
}

RegretStats best_policy_regret(const CalibrationRun& run) {
  RegretStats s;
  double regret = 0;
  int within = 0, exact = 0;
  for (const auto& group : workload_groups(run)) {
    const auto best_measured = std::min_element(
        group.begin(), group.end(), [](const TimedRow& a, const TimedRow& b) { return a.measured < b.measured; });
    const auto pick = std::min_element(group.begin(), group.end(),
                                       [](const TimedRow& a, const TimedRow& b) { return a.predicted < b.predicted; });
    const double r = pick->measured / best_measured->measured - 1.0;
    regret += r;
    within += r <= 0.03;
    exact += pick == best_measured;
    ++s.workloads;
  }
  if (s.workloads) {
    s.mean_regret_pct = 100.0 * regret / s.workloads;
    s.within_3pct_pct = 100.0 * within / s.workloads;
    s.exact_pct = 100.0 * exact / s.workloads;
  }
  return s;
}

nlohmann::ordered_json error_report_json(const CalibrationRun& run) {
  nlohmann::ordered_json j = calibration_report_json(run);
  std::vector<double> all;
  for (const RowFit& f : run.result.rows) all.push_back(f.error_pct);
  j["all"] = stats_json(error_stats(all));
  j["slices"] = nlohmann::ordered_json::array();
  for (const SliceTable& t : error_slices(run)) {
    nlohmann::ordered_json slices = nlohmann::ordered_json::array();
    for (const Slice& s : t.slices) {
      nlohmann::ordered_json one = stats_json(s.stats);
      one["name"] = s.name;
      slices.push_back(std::move(one));
    }
    j["slices"].push_back({{"by", t.by}, {"slices", std::move(slices)}});
  }
  j["speedup_pairs"] = pair_json(speedup_pairs(run));
  j["speedup_pairs_by_class"] = nlohmann::ordered_json::object();
  for (const auto& [name, p] : speedup_pairs_by_class(run)) j["speedup_pairs_by_class"][name] = pair_json(p);
  const RegretStats r = best_policy_regret(run);
  j["best_policy"] = {{"workloads", r.workloads},
                      {"mean_regret_pct", r.mean_regret_pct},
                      {"within_3pct_pct", r.within_3pct_pct},
                      {"exact_pct", r.exact_pct}};
  return j;
}

std::string error_report_text(const CalibrationRun& run) {
  std::vector<double> all;
  for (const RowFit& f : run.result.rows) all.push_back(f.error_pct);
  const ErrorStats a = error_stats(all);
  std::string out = fmt::format("{} rows: MAPE {:.1f}%, p50 {:.1f}%, p90 {:.1f}%, max {:.0f}%, mean signed {:+.1f}%\n",
                                a.rows, a.mape_pct, a.p50_pct, a.p90_pct, a.max_pct, a.mean_signed_pct);
  for (const SliceTable& t : error_slices(run)) {
    out += fmt::format("\nby {}\n{:<40} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9}\n", t.by, "", "rows", "MAPE %", "p50 %",
                       "p90 %", "max %", "signed %");
    for (const Slice& s : t.slices)
      out += fmt::format("{:<40} {:>6} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.0f} {:>+9.1f}\n", s.name, s.stats.rows,
                         s.stats.mape_pct, s.stats.p50_pct, s.stats.p90_pct, s.stats.max_pct, s.stats.mean_signed_pct);
  }
  const PairStats p = speedup_pairs(run);
  out += fmt::format(
      "\nspeedup pairs: {} (two policies on one workload); |error| median {:.1f}%, p90 {:.1f}%; "
      "faster policy named in {:.1f}% of the {} pairs differing by >= 10%\n",
      p.pairs, p.median_abs_error_pct, p.p90_abs_error_pct, p.faster_named_pct, p.differing_pairs);
  for (const auto& [name, c] : speedup_pairs_by_class(run))
    out += fmt::format("  {}: {} pairs; |error| median {:.1f}%, p90 {:.1f}%\n", name, c.pairs, c.median_abs_error_pct,
                       c.p90_abs_error_pct);
  const RegretStats r = best_policy_regret(run);
  out += fmt::format(
      "best-policy pick: {} workloads; mean regret {:.1f}%, within 3% of the measured best in {:.1f}%, "
      "exact in {:.1f}%\n",
      r.workloads, r.mean_regret_pct, r.within_3pct_pct, r.exact_pct);
  return out;
}

}  // namespace mlasim::validate
