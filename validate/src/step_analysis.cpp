#include "mlasim/validate/step_analysis.h"

#include <algorithm>
#include <fmt/format.h>

#include "mlasim/model/input_error.h"

namespace mlasim::validate {
namespace {

// The step's launch count from its first kernel that the rules' batch_from names and that has a grid: 0 when none
// has, -1 when divide_by does not divide it or it is past kMaxStepBatch.
long long batch_of(const std::vector<const TraceKernel*>& kernels, const StepRules& rules) {
  const BatchFromGrid& from = rules.batch_from;
  if (from.match.empty()) return 0;
  for (const TraceKernel* k : kernels) {
    const long long blocks = k->grid[static_cast<size_t>(from.axis)];
    if (blocks <= 0 || !from.matches(k->name)) continue;
    if (blocks % from.divide_by != 0 || blocks / from.divide_by > kMaxStepBatch) return -1;
    return blocks / from.divide_by;
  }
  return 0;
}

// Each kernel's exposed time and gap, in start order within one step.
DecodeStep make_step(int index, const std::vector<const TraceKernel*>& kernels, const StepRules& rules) {
  DecodeStep s;
  s.index = index;
  double latest_end = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const TraceKernel& k = *kernels[i];
    StepKernel out{k.name, rules.classify(k.name), 0, 0, std::nullopt};
    if (i == 0) {
      out.exposed_us = k.end_us - k.start_us;
      latest_end = k.end_us;
    } else {
      out.gap_us = std::max(0.0, k.start_us - latest_end);
      out.exposed_us = std::max(0.0, k.end_us - std::max(k.start_us, latest_end));
      latest_end = std::max(latest_end, k.end_us);
    }
    s.kernels.push_back(std::move(out));
  }
  return s;
}

// The automatic step gap: well above the launch gaps inside a step (20 x their median), and at least 100 us.
double automatic_step_gap(const KernelTrace& t) {
  std::vector<double> gaps;
  double latest_end = t.kernels.front().end_us;
  for (size_t i = 1; i < t.kernels.size(); ++i) {
    gaps.push_back(std::max(0.0, t.kernels[i].start_us - latest_end));
    latest_end = std::max(latest_end, t.kernels[i].end_us);
  }
  if (gaps.empty()) return 100.0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return std::max(100.0, 20.0 * gaps[gaps.size() / 2]);
}

}  // namespace

double DecodeStep::time_us() const {
  double t = 0;
  for (const StepKernel& k : kernels) t += k.exposed_us + k.gap_us;
  return t;
}

double DecodeStep::gaps_us() const {
  double t = 0;
  for (const StepKernel& k : kernels) t += k.gap_us;
  return t;
}

int DecodeStep::layers() const {
  return static_cast<int>(std::count_if(kernels.begin(), kernels.end(),
                                        [](const StepKernel& k) { return k.kernel_class == "mla_stage1"; }));
}

std::map<std::string, double> DecodeStep::class_us() const {
  std::map<std::string, double> out;
  for (const std::string& c : step_classes()) out[c] = 0;
  for (const StepKernel& k : kernels) out[k.kernel_class] += k.exposed_us;
  return out;
}

StepAnalysis analyse_steps(const KernelTrace& trace, const StepRules& rules, const StepOptions& options) {
  if (options.skip < 0) throw InputError("skip", "must be >= 0, got " + std::to_string(options.skip));
  if (options.step_gap_us < 0)
    throw InputError("step-gap-us", "must be >= 0 (0: automatic), got " + fmt::format("{}", options.step_gap_us));
  StepAnalysis a;
  a.trace = trace.origin;
  a.format = trace.format;
  a.rules = rules.name;
  a.kernels = static_cast<int>(trace.kernels.size());
  std::vector<std::vector<const TraceKernel*>> groups;
  // Markers cut the steps only when some kernel's launch lies in one (a trace whose launches carry no correlation
  // ids has markers that place nothing): else the device gaps do.
  const bool markers_place =
      std::any_of(trace.kernels.begin(), trace.kernels.end(), [](const TraceKernel& k) { return k.marked_step >= 0; });
  if (options.use_markers && trace.marked_steps > 0 && markers_place) {
    a.split = "markers";
    groups.resize(static_cast<size_t>(trace.marked_steps));
    // A kernel whose launch no marker covers (a library whose launches the profiler did not correlate) belongs to
    // the step of the marked kernel before it on the device; before the first marked kernel, to none.
    int step = -1;
    for (const TraceKernel& k : trace.kernels) {
      if (k.marked_step >= 0) step = k.marked_step;
      if (k.marked_step < 0) ++a.unmarked_kernels;
      if (step >= 0) groups[static_cast<size_t>(step)].push_back(&k);
    }
    groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g.empty(); }), groups.end());
  } else {
    const double gap = options.step_gap_us > 0 ? options.step_gap_us : automatic_step_gap(trace);
    groups.emplace_back();
    double latest_end = trace.kernels.front().end_us;
    for (const TraceKernel& k : trace.kernels) {
      if (!groups.back().empty() && k.start_us - latest_end > gap) groups.emplace_back();
      groups.back().push_back(&k);
      latest_end = std::max(latest_end, k.end_us);
    }
    a.split = groups.size() > 1 ? fmt::format("gaps > {:.0f} us", gap) : "whole trace";
    if (options.use_markers && trace.marked_steps > 0) a.split += " (its step markers hold no correlated launch)";
  }
  a.total_steps = static_cast<int>(groups.size());
  if (options.skip >= a.total_steps)
    throw InputError("skip", "leaves no step: --skip " + std::to_string(options.skip) + " of the trace's " +
                                 std::to_string(a.total_steps) + " (" + a.split + ")");
  for (int i = options.skip; i < a.total_steps; ++i) {
    // Within a step, device order (markers group kernels by launch; a stream's kernels may interleave).
    auto& g = groups[static_cast<size_t>(i)];
    std::stable_sort(g.begin(), g.end(),
                     [](const TraceKernel* x, const TraceKernel* y) { return x->start_us < y->start_us; });
    a.steps.push_back(make_step(i, g, rules));
    const long long count = batch_of(g, rules);
    a.steps.back().batch = static_cast<int>(std::max(0LL, count));
    if (count > 0) ++a.steps_with_batch;
    if (count < 0) ++a.batch_refused;
  }
  a.batch_source = rules.batch_from.describe();
  a.batch_counts_tokens = rules.batch_from.counts_tokens;
  return a;
}

double StepSummary::attention_share() const {
  const auto at = [&](const char* c) {
    const auto it = class_us.find(c);
    return it == class_us.end() ? 0.0 : it->second;
  };
  return time_us > 0 ? (at("mla_stage1") + at("mla_reduce")) / time_us : 0.0;
}

StepSummary summarize(const std::vector<DecodeStep>& steps) {
  StepSummary s;
  for (const std::string& c : step_classes()) s.class_us[c] = 0;
  if (steps.empty()) return s;
  for (const DecodeStep& step : steps) {
    s.time_us += step.time_us();
    s.gaps_us += step.gaps_us();
    s.kernels += static_cast<double>(step.kernels.size());
    s.layers += step.layers();
    for (const auto& [c, us] : step.class_us()) s.class_us[c] += us;
  }
  const double n = static_cast<double>(steps.size());
  s.time_us /= n;
  s.gaps_us /= n;
  s.kernels /= n;
  s.layers /= n;
  for (auto& [c, us] : s.class_us) us /= n;
  return s;
}

}  // namespace mlasim::validate
