#include "mlasim/validate/calibration_run.h"

#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/kernel_choice.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "mlasim/model/kernel_class.h"

#include "mlasim/model/input_error.h"
#include "mlasim/sim/policy_spec.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::validate {
namespace {

std::string where(const MeasurementRow& row) { return "line " + std::to_string(row.line); }

double stage_of(const sim::Metrics& m, const std::string& target) {
  if (target == "kernel_us") return m.kernel_us;
  if (target == "reduce_us") return m.reduce_us;
  return m.stage1_us;
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string plus_minus(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : "n/a"; }

}  // namespace

const std::vector<std::string>& default_free_keys() {
  static const std::vector<std::string> keys{"t_fix_us", "beta_cu_gbps", "b_hbm_tbps", "matrix_efficiency",
                                             "reduce_block_us"};
  return keys;
}

PreparedRow prepare_row(const MeasurementRow& row, const Gpu& gpu) {
  PreparedRow p;
  p.row = row;
  if (!row.context && row.kv_lens.empty())
    throw InputError("context", where(row) + ": a ragged row has no lengths to predict from (no kv_lens column)");
  p.batch = DecodeBatch::uniform(row.batch, 1, row.qo_len);
  p.batch.kv_lens = row.lengths();
  p.batch.q_heads = row.heads;
  p.batch.q_dtype = row.q_dtype;
  p.batch.kv_dtype = row.kv_dtype;
  p.batch.page_size = row.page_size;
  p.batch.topk = row.topk;
  // AITER's op test (aiter-v1-planner.md §11b): kv_granularity = max(page, 32 for 64-head fp8/fp8, else 16).
  const bool wide = row.heads == 64 && row.q_dtype == DType::fp8 && row.kv_dtype == DType::fp8;
  p.batch.kv_granularity = std::max(row.page_size, wide ? 32 : 16);
  if (row.time_ratio) {
    p.target = "time_ratio";
    p.measured_us = *row.time_ratio;
  } else if (row.kernel_us) {
    p.target = "kernel_us";
    p.measured_us = *row.kernel_us;
  } else if (row.reduce_us) {
    p.target = "reduce_us";
    p.measured_us = *row.reduce_us;
  } else {
    p.target = "stage1_us";
    p.measured_us = row.stage1_us.value_or(0.0);
  }
  try {
    p.batch.validate();
    sim::check_clusters(row.clusters, gpu);
    const auto policy = sim::make_policy(row.policy);
    p.plan = policy->plan({p.batch, gpu, row.clusters});
    p.kernel =
        sim::kernel_class_of_run(row.kernel, p.plan, p.batch).value_or(sim::auto_kernel_class(p.plan, p.batch, gpu));
    if (row.time_ratio) {
      p.vs_plan = sim::make_policy(row.vs_policy)->plan({p.batch, gpu, row.clusters});
    }
  } catch (const InputError& e) {
    throw InputError(e.field(), where(row) + ": " + e.what());
  }
  return p;
}

double predict_row(const PreparedRow& row, const Gpu& gpu, const CostParams& params) {
  if (row.target == "time_ratio")
    return sim::simulate_metrics(row.plan, row.batch, gpu, params).kernel_us /
           sim::simulate_metrics(row.vs_plan, row.batch, gpu, params).kernel_us;
  return stage_of(sim::simulate_metrics(row.plan, row.batch, gpu, params, row.kernel), row.target);
}

CalibrationRun run_calibration(const Gpu& gpu, const std::vector<MeasurementRow>& rows,
                               const CalibrationRunOptions& options) {
  if (rows.empty()) throw InputError("measurements", "no rows for GPU '" + gpu.name + "'");
  CalibrationRun run;
  run.gpu = gpu;
  for (const MeasurementRow& r : rows) run.rows.push_back(prepare_row(r, gpu));

  CalibrationProblem problem;
  problem.start = cost_params_for(gpu);
  for (const std::string& key : options.free.empty() ? default_free_keys() : options.free)
    problem.free.push_back(free_parameter(key, gpu));
  for (const PreparedRow& r : run.rows) problem.measured_us.push_back(r.measured_us);
  problem.held_out = every_nth_held_out(run.rows.size(), options.holdout_every);
  problem.predict = [&run, &gpu](size_t i, const CostParams& p) { return predict_row(run.rows[i], gpu, p); };
  run.result = calibrate(problem, options.solver);
  return run;
}

CalibrationRun evaluate_profile(const Gpu& gpu, const std::vector<MeasurementRow>& rows) {
  if (rows.empty()) throw InputError("measurements", "no rows for GPU '" + gpu.name + "'");
  CalibrationRun run;
  run.gpu = gpu;
  const CostParams params = cost_params_for(gpu);
  run.result.params = params;
  run.result.converged = true;
  double sum = 0;
  for (const MeasurementRow& r : rows) {
    run.rows.push_back(prepare_row(r, gpu));
    const PreparedRow& p = run.rows.back();
    const double predicted = predict_row(p, gpu, params);
    const double err = 100.0 * (predicted / p.measured_us - 1.0);
    run.result.rows.push_back({run.rows.size() - 1, p.measured_us, predicted, err, false});
    run.result.max_abs_error_pct = std::max(run.result.max_abs_error_pct, std::abs(err));
    sum += std::abs(err);
  }
  run.result.fit_rows = static_cast<int>(rows.size());
  run.result.fit_mape_pct = sum / static_cast<double>(rows.size());
  run.result.residual_std = std::numeric_limits<double>::quiet_NaN();
  return run;
}

std::string line_ranges(std::vector<int> lines) {
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (j == i ? std::to_string(lines[i]) : std::to_string(lines[i]) + "-" + std::to_string(lines[j]));
    i = j + 1;
  }
  return out;
}

std::string fitted_source(const CalibrationRun& run, const std::string& measurement_files, const std::string& date) {
  std::vector<int> fit, held;
  for (const RowFit& r : run.result.rows) (r.held_out ? held : fit).push_back(run.rows[r.row].row.line);
  std::string s = fmt::format("mlasim calibrate, {}: fitted to {} lines {}", date, measurement_files, line_ranges(fit));
  if (!held.empty()) s += fmt::format(" (held out: lines {})", line_ranges(held));
  return s + fmt::format("; fit MAPE {:.1f}%, held-out MAPE {:.1f}%; docs/validation.md", run.result.fit_mape_pct,
                         run.result.held_out_mape_pct);
}

namespace {

nlohmann::ordered_json parse_profile(const std::string& profile_json) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(profile_json);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond double
    throw InputError("gpu", "the profile is not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw InputError("gpu", "the profile must be a JSON object");
  if (!j.contains("params") || !j["params"].is_object()) j["params"] = nlohmann::ordered_json::object();
  return j;
}

}  // namespace

std::map<std::string, ModelError> model_error_by_class(const CalibrationRun& run, const std::string& source) {
  const bool any_held = run.result.held_out_rows > 0;
  std::map<std::string, std::vector<double>> errors;
  for (const RowFit& f : run.result.rows)
    if (f.held_out || !any_held) errors[mlasim::kernel_class(run.rows[f.row].kernel).name].push_back(f.error_pct);
  std::map<std::string, ModelError> out;
  for (const auto& [name, e] : errors) {
    double sq = 0, abs_sum = 0;
    for (double x : e) {
      sq += x * x;
      abs_sum += std::abs(x);
    }
    const double n = static_cast<double>(e.size());
    out[name] = ModelError{std::sqrt(sq / n), abs_sum / n, static_cast<int>(e.size()),
                           source + (any_held ? " (held-out rows)" : " (fitted rows: none held out)")};
  }
  return out;
}

std::string profile_json_with_params(const std::string& profile_json, const std::map<std::string, GpuParam>& params) {
  nlohmann::ordered_json j = parse_profile(profile_json);
  for (const auto& [key, p] : params) j["params"][key] = gpu_param_json(p);
  return j.dump(2) + "\n";
}

std::string fitted_profile_json(const std::string& profile_json, const CalibrationRun& run, const std::string& source) {
  nlohmann::ordered_json j = parse_profile(profile_json);
  for (const FittedParameter& f : run.result.fitted) {
    const std::string sigma = f.at_bound ? "held at its bound" : "1 sigma " + plus_minus(f.std_error);
    GpuParam p{f.value, "fitted", source + "; " + sigma};
    if (!f.at_bound) p.std_error = f.std_error;
    j["params"][f.key] = gpu_param_json(p);
  }
  nlohmann::ordered_json errors = nlohmann::ordered_json::object();
  for (const auto& [name, e] : model_error_by_class(run, source)) errors[name] = model_error_json(e);
  j["model_error"] = errors;
  // Of the parameters just replaced: scripts/ratio_error_fit.py and scripts/edit_error_fit.py measure them again.
  j.erase("ratio_error");
  j.erase("edit_error");
  return j.dump(2) + "\n";
}

nlohmann::ordered_json calibration_report_json(const CalibrationRun& run) {
  const CalibrationResult& r = run.result;
  nlohmann::ordered_json j;
  j["gpu"] = run.gpu.name;
  j["converged"] = r.converged;
  j["iterations"] = r.iterations;
  j["fit_rows"] = r.fit_rows;
  j["held_out_rows"] = r.held_out_rows;
  j["fit_mape_pct"] = r.fit_mape_pct;
  j["held_out_mape_pct"] = r.held_out_mape_pct;
  j["max_abs_error_pct"] = r.max_abs_error_pct;
  j["residual_std"] = number_or_null(r.residual_std);
  j["params"] = nlohmann::ordered_json::array();
  for (const FittedParameter& f : r.fitted)
    j["params"].push_back({{"key", f.key},
                           {"start", f.start},
                           {"value", f.value},
                           {"std_error", number_or_null(f.std_error)},
                           {"lower", f.lower},
                           {"upper", f.upper},
                           {"at_bound", f.at_bound}});
  j["rows"] = nlohmann::ordered_json::array();
  for (const RowFit& f : r.rows) {
    const PreparedRow& p = run.rows[f.row];
    j["rows"].push_back({{"line", p.row.line},
                         {"kernel", p.row.kernel},
                         {"policy", p.plan.policy},
                         {"vs_policy", p.vs_plan.policy},
                         {"batch", p.row.batch},
                         {"context", p.row.context.value_or(0)},
                         {"heads", p.row.heads},
                         {"qo_len", p.row.qo_len},
                         {"target", p.target},
                         {"measured_us", f.measured_us},
                         {"predicted_us", f.predicted_us},
                         {"error_pct", f.error_pct},
                         {"held_out", f.held_out},
                         {"source", p.row.source}});
  }
  return j;
}

std::string calibration_report_text(const CalibrationRun& run) {
  const CalibrationResult& r = run.result;
  std::string out;
  if (r.fitted.empty()) {
    out = fmt::format("predictions of {} with its profile's parameters ({} rows, nothing fitted)\n", run.gpu.name,
                      r.fit_rows);
    for (const std::string& key : cost_param_keys())
      out += fmt::format("  {:<18} {:g}\n", key, get_cost_param(r.params, key));
  } else {
    out = fmt::format("calibration of {} ({} rows fitted, {} held out; {} after {} iterations)\n\n", run.gpu.name,
                      r.fit_rows, r.held_out_rows, r.converged ? "converged" : "NOT converged", r.iterations);
    out += fmt::format("{:<18} {:>12} {:>12} {:>12}  {}\n", "parameter", "start", "fitted", "1 sigma", "bounds");
    for (const FittedParameter& f : r.fitted)
      out += fmt::format("{:<18} {:>12.4g} {:>12.4g} {:>12} [{:g}, {:g}]{}\n", f.key, f.start, f.value,
                         plus_minus(f.std_error), f.lower, f.upper, f.at_bound ? " at bound" : "");
  }
  out += fmt::format("\n{:>5} {:>6} {:>7} {:>5} {:>4}  {:<34} {:>9} {:>11} {:>12} {:>8}\n", "line", "batch", "context",
                     "heads", "qlen", "policy", "target", "measured", "predicted", "error");
  for (const RowFit& f : r.rows) {
    const PreparedRow& p = run.rows[f.row];
    out += fmt::format("{:>5} {:>6} {:>7} {:>5} {:>4}  {:<34} {:>9} {:>11.3f} {:>12.3f} {:>+7.1f}%{}\n", p.row.line,
                       p.row.batch, p.row.context.value_or(0), p.row.heads, p.row.qo_len,
                       p.vs_plan.policy.empty() ? p.plan.policy : p.plan.policy + " / " + p.vs_plan.policy, p.target,
                       f.measured_us, f.predicted_us, f.error_pct, f.held_out ? " held out" : "");
  }
  if (r.fitted.empty())
    return out + fmt::format("\nMAPE {:.2f}%, max |error| {:.1f}%\n", r.fit_mape_pct, r.max_abs_error_pct);
  out += fmt::format("\nMAPE fitted rows {:.2f}%, held-out rows {:.2f}%, max |error| {:.1f}%, residual std {:.3f}\n",
                     r.fit_mape_pct, r.held_out_mape_pct, r.max_abs_error_pct, r.residual_std);
  return out;
}

}  // namespace mlasim::validate
