// mlasim step: a measured kernel trace cut into decode steps, the time per kernel class, and what edits (another
// split policy, fused or removed kernels, graph-replay gaps) would make of the step, its ITL and tokens/s.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/plan_text.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_what_if.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

using validate::StepSummary;

struct StepCommandOptions {
  WorkloadOptions workload;
  std::string trace;
  std::string rules = "mlasim-torch";
  std::vector<std::string> edits;
  std::string op_bytes;
  std::string step_batches;
  std::string policy = "aiter-v1";
  CLI::Option* policy_flag = nullptr;
  int skip = 0;
  double step_gap_us = 0;
  bool no_markers = false;
  bool steps = false;
  std::string format = "text";
};

double tokens_per_s(double tokens, double step_us) { return step_us > 0 ? tokens / (step_us * 1e-6) : 0.0; }

nlohmann::json summary_json(const StepSummary& s, double tokens) {
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [c, us] : s.class_us) classes[c] = us;
  return {{"step_us", s.time_us},      {"gaps_us", s.gaps_us},
          {"kernels", s.kernels},      {"layers", s.layers},
          {"class_us", classes},       {"attention_share", s.attention_share()},
          {"itl_ms", s.time_us / 1e3}, {"tokens_per_s", tokens_per_s(tokens, s.time_us)}};
}

nlohmann::json metadata_json(const validate::MetadataBuild& b) {
  nlohmann::json us = nlohmann::json::object();
  for (const auto& [impl, t] : b.us) us[impl] = t;
  return {{"policy", b.policy}, {"clusters", b.clusters}, {"works", b.works}, {"requests", b.requests}, {"us", us}};
}

std::string change(double before, double after) {
  if (before <= 0) return "";
  return fmt::format("{:+.1f} %", (after / before - 1) * 100);
}

// Steps whose launch grid (the rules' batch_from) gives another count than their entry of the step batches: the file's
// is taken (a CUDA graph's grid is its captured size), and the report says how many of the steps with a grid.
struct GridCheck {
  int with_grid = 0, disagree = 0;
};
GridCheck grid_disagreements(const validate::StepAnalysis& a, const validate::StepBatches& batches) {
  int with_grid = 0, disagree = 0;
  for (const validate::DecodeStep& s : a.steps) {
    if (s.batch <= 0) continue;
    ++with_grid;
    const DecodeBatch& b = batches.steps.at(static_cast<size_t>(s.index));
    disagree += (a.batch_counts_tokens ? b.total_qo_tokens() : b.size()) != s.batch;
  }
  return {with_grid, disagree};
}

// The batches the steps ran: "8 (50 steps), 16 (50 steps) from grid.x of /rope_kv_write_kernel/ in 100 of 100
// steps; ...", saying how many steps the trace did not give one for, and why.
std::string batch_line(const validate::StepAnalysis& a, const validate::StepWhatIf& w, const sim::WorkloadContext& ctx,
                       const validate::StepBatches* batches) {
  if (batches) {
    // Each step's own batch from the user's file: how many differ, and their range.
    const std::vector<int> first_equal = validate::first_equal_entries(*batches);
    std::set<int> distinct;
    int fewest = 0, most = 0, shortest = 0, longest = 0;
    for (const validate::DecodeStep& s : a.steps) {
      const DecodeBatch& b = batches->steps.at(static_cast<size_t>(s.index));
      distinct.insert(first_equal[static_cast<size_t>(s.index)]);
      const auto [lo, hi] = std::minmax_element(b.kv_lens.begin(), b.kv_lens.end());
      fewest = fewest == 0 ? b.size() : std::min(fewest, b.size());
      most = std::max(most, b.size());
      shortest = shortest == 0 ? *lo : std::min(shortest, *lo);
      longest = std::max(longest, *hi);
    }
    const auto span = [](int lo, int hi) { return lo == hi ? fmt::format("{}", lo) : fmt::format("{} to {}", lo, hi); };
    const GridCheck g = grid_disagreements(a, *batches);
    const std::string grids =
        g.with_grid == 0 ? std::string()
        : g.disagree == 0
            ? fmt::format("; {} gives the same count in all {} steps it is in", a.batch_source, g.with_grid)
            : fmt::format(
                  "; {} gives another count in {} of the {} steps it is in (the file's is taken: a CUDA "
                  "graph's grid is its captured size, or the file is another trace's)",
                  a.batch_source, g.disagree, g.with_grid);
    return fmt::format(
        "each step's own from {}: {} batch{} over {} steps, {} requests of {} KV tokens{}; heads and "
        "dtypes from the flags",
        batches->origin, distinct.size(), distinct.size() == 1 ? "" : "es", a.steps.size(), span(fewest, most),
        span(shortest, longest), grids);
  }
  std::map<int, int> steps;
  for (const int r : w.step_requests) ++steps[r];
  std::string out;
  for (const auto& [batch, n] : steps)
    out += fmt::format("{}{} ({} step{})", out.empty() ? "" : ", ", batch, n, n == 1 ? "" : "s");
  out += fmt::format("; from {} in {} of {} steps", a.batch_source, a.steps_with_batch, a.steps.size());
  const int rest = static_cast<int>(a.steps.size()) - a.steps_with_batch;
  if (rest > 0)
    out += fmt::format(", the other {} at the flags' {} requests ({} without a matching kernel with a grid{})", rest,
                       ctx.batch.size(), rest - a.batch_refused,
                       a.batch_refused > 0 ? fmt::format(", {} whose count divide_by does not divide or is past {}",
                                                         a.batch_refused, validate::kMaxStepBatch)
                                           : std::string());
  if (!ctx.batch.merge_token.empty()) out += "; a two-scope batch keeps the flags' requests";
  return out + "; contexts, heads and dtypes from the flags";
}

std::string text_report(const validate::StepAnalysis& a, const validate::StepWhatIf& w, const sim::WorkloadContext& ctx,
                        const validate::StepBatches* batches, const validate::MetadataBuild& build, bool per_step) {
  std::string out = fmt::format(
      "trace   {} ({}, {} steps by {}, {} skipped; {} kernels{})\n", a.trace, a.format, a.total_steps, a.split,
      a.total_steps - static_cast<int>(a.steps.size()), a.kernels,
      a.unmarked_kernels > 0 ? fmt::format(", {} outside every step marker", a.unmarked_kernels) : std::string());
  out += fmt::format("rules   {}\n", a.rules);
  out += fmt::format("step    {}\n", sim::describe_workload(ctx.batch, ctx.gpu, ctx.clusters));
  if (!a.batch_source.empty() || batches) out += fmt::format("batch   {}\n", batch_line(a, w, ctx, batches));
  out += "\n";
  const StepSummary& b = w.before_summary;
  const StepSummary& f = w.after_summary;
  const bool edited = !w.notes.empty();
  out += fmt::format("{:<18} {:>12}{}\n", "per step (mean)", "measured",
                     edited ? fmt::format(" {:>12} {:>10}", "edited", "change") : std::string());
  const auto line = [&](const std::string& name, double x, double y, const char* unit) {
    out += fmt::format(
        "{:<18} {:>12}{}\n", name, fmt::format("{:.2f}{}", x, unit),
        edited ? fmt::format(" {:>12} {:>10}", fmt::format("{:.2f}{}", y, unit), change(x, y)) : std::string());
  };
  line("step_us", b.time_us, f.time_us, "");
  for (const std::string& c : validate::step_classes()) line("  " + c, b.class_us.at(c), f.class_us.at(c), "");
  line("  gaps", b.gaps_us, f.gaps_us, "");
  line("kernels", b.kernels, f.kernels, "");
  line("layers", b.layers, f.layers, "");
  line("attention share", b.attention_share() * 100, f.attention_share() * 100, " %");
  line("ITL (ms)", b.time_us / 1e3, f.time_us / 1e3, "");
  line("tokens/s", tokens_per_s(w.tokens_per_step, b.time_us), tokens_per_s(w.tokens_per_step, f.time_us), "");
  if (const std::string spread = validate::spread_text(w.measured_spread, b.time_us); !spread.empty())
    out += "spread  " + spread + "\n";
  if (edited) {
    out += fmt::format("\nuplift  {:.3f}x step time ({:+.1f} % tokens/s)\n", w.speedup(), (w.speedup() - 1) * 100);
    if (const auto band = w.band_range()) {
      const auto [low, high] = *band;
      out += fmt::format("band    step {:.2f} .. {:.2f} us ({} .. {} against the measured step), 90 %: {}{}\n", low,
                         high, change(b.time_us, low), change(b.time_us, high), w.band_basis,
                         w.other_edits() ? fmt::format("; not in it: {}", fmt::join(w.unbanded_edits, ", ")) : "");
    } else if (!w.band_basis.empty()) {
      out += fmt::format("band    none: {}\n", w.band_basis);
    }
    if (const std::string confirm = validate::confirm_text(w.measured_spread, f.time_us - b.time_us); !confirm.empty())
      out += "confirm " + confirm + "\n";
    out += "edits\n";
    for (const std::string& n : w.notes) out += "  " + n + "\n";
  }
  out += fmt::format(
      "\nmetadata build of the plan of {} for the flags' batch ({} clusters, {} works, {} requests), "
      "predicted:",
      build.policy, build.clusters, build.works, build.requests);
  for (const auto& [impl, us] : build.us) out += fmt::format(" {} {:.2f} us,", impl, us);
  out.back() = '\n';
  out += fmt::format("  traced metadata kernels: {:.2f} us per step (metadata=IMPL puts a build in the step)\n",
                     b.class_us.at("metadata"));
  if (per_step) {
    out += "\nstep  batch  measured_us  edited_us  kernels  layers\n";
    for (size_t i = 0; i < w.before.size(); ++i)
      out += fmt::format("{:>4}  {:>5}  {:>11.2f}  {:>9.2f}  {:>7}  {:>6}\n", w.before[i].index, w.step_requests[i],
                         w.before[i].time_us(), w.after[i].time_us(), w.before[i].kernels.size(), w.before[i].layers());
  }
  return out;
}

void run_step(const StepCommandOptions& o) {
  check_format(o.format, {"text", "json", "csv"});
  std::vector<validate::StepEdit> edits;
  for (const std::string& e : o.edits) edits.push_back(validate::parse_step_edit(e));
  const auto scenario = o.workload.scenario();
  const sim::WorkloadContext ctx = sim::resolve(o.workload.workload(scenario));
  // The policy that ran: --policy, else the scenario's policy A (as the explorer's Step tab takes it).
  const std::string policy = choose_policy(o.policy_flag, o.policy, scenario, "A", 0, "aiter-v1");
  sim::make_policy(policy);  // a bad --policy is reported before the trace is read
  const validate::StepRules rules = validate::load_step_rules(o.rules);
  const validate::KernelTrace trace = validate::read_kernel_trace(o.trace);
  const validate::StepAnalysis a = validate::analyse_steps(trace, rules, {o.skip, o.step_gap_us, !o.no_markers});
  const sim::MetadataCostModel metadata_cost = sim::load_metadata_cost();
  std::optional<validate::OpBytesRules> op_bytes;
  if (!o.op_bytes.empty()) op_bytes = validate::load_op_bytes(o.op_bytes);
  std::optional<validate::StepBatches> batches;
  if (!o.step_batches.empty()) batches = validate::load_step_batches(o.step_batches, ctx.batch, a.total_steps);
  const validate::StepWhatIf w = validate::apply_step_edits(
      a, edits, {&ctx, policy, &metadata_cost, op_bytes ? &*op_bytes : nullptr, batches ? &*batches : nullptr});
  const validate::MetadataBuild build = validate::metadata_build(metadata_cost, policy, ctx);
  if (o.format == "text") {
    write_stdout(text_report(a, w, ctx, batches ? &*batches : nullptr, build, o.steps));
  } else if (o.format == "json") {
    nlohmann::json steps = nlohmann::json::array();
    for (size_t i = 0; i < w.before.size(); ++i)
      steps.push_back({{"index", w.before[i].index},
                       {"requests", w.step_requests[i]},
                       {"kv_tokens", w.step_kv_tokens[i]},
                       {"batch_from_count", w.before[i].batch},
                       {"measured_us", w.before[i].time_us()},
                       {"edited_us", w.after[i].time_us()},
                       {"kernels", w.before[i].kernels.size()},
                       {"layers", w.before[i].layers()}});
    nlohmann::json policy_changes = nlohmann::json::array();
    for (const validate::PolicyChangeFigures& c : w.policy_changes)
      policy_changes.push_back({{"edit", c.edit},
                                {"ran_policy", c.ran_policy},
                                {"next_policy", c.next_policy},
                                {"requests", c.requests},
                                {"batch", c.batch},
                                {"ran_us", c.ran_us},
                                {"next_us", c.next_us},
                                {"ratio", c.ratio()},
                                {"offset_carry", c.offset_carry},
                                {"ran_kernel_class", c.ran_class},
                                {"l2_carry", c.carry_known ? nlohmann::json{{"dirty_ran_mb", c.dirty_ran_mb},
                                                                            {"dirty_next_mb", c.dirty_next_mb},
                                                                            {"reread_missed_ran_mb", c.missed_ran_mb},
                                                                            {"reread_missed_next_mb", c.missed_next_mb},
                                                                            {"next_kernel_us", c.carry_us}}
                                                           : nlohmann::json()},
                                {"ratio_error", c.ratio_pairs > 0 ? nlohmann::json{{"kernel_class", c.kernel_class},
                                                                                   {"p90_pct", c.ratio_p90_pct},
                                                                                   {"pairs", c.ratio_pairs}}
                                                                  : nlohmann::json()}});
    // The edits' 90 % band of the edited step time; null with the reason where not known.
    nlohmann::json band;
    if (const auto range = w.band_range())
      band = {{"half_width_us", *w.band_us}, {"low_us", range->first},         {"high_us", range->second},
              {"basis", w.band_basis},       {"other_edits", w.other_edits()}, {"not_in_it", w.unbanded_edits}};
    else if (!w.band_basis.empty())
      band = {{"half_width_us", nullptr}, {"basis", w.band_basis}};
    const validate::StepSpread& spread = w.measured_spread;
    const double change_us = w.after_summary.time_us - w.before_summary.time_us;
    const std::optional<long long> need =
        o.edits.empty() ? std::nullopt : validate::steps_to_confirm(spread, change_us);
    const nlohmann::json spread_json = {{"steps", spread.steps},
                                        {"batches", spread.batches},
                                        {"sd_us", spread.sd_us},
                                        {"mean_ci95_us", spread.mean_ci95_us},
                                        {"change_ci95_us", spread.change_ci95_us()},
                                        {"steps_to_confirm_5pct", need ? nlohmann::json(*need) : nlohmann::json()}};
    // Steps whose grid disagrees with their entry of the step batches (none without a file or a grid).
    const GridCheck grid = batches ? grid_disagreements(a, *batches) : GridCheck{};
    const nlohmann::json j = {
        {"trace", a.trace},
        {"format", a.format},
        {"rules", a.rules},
        {"split", a.split},
        {"total_steps", a.total_steps},
        {"kernels", a.kernels},
        {"unmarked_kernels", a.unmarked_kernels},
        {"batch_source", a.batch_source},
        {"step_batches", batches ? nlohmann::json(batches->origin) : nlohmann::json()},
        {"step_batches_grid_disagree", grid.with_grid > 0 ? nlohmann::json(grid.disagree) : nlohmann::json()},
        {"steps_with_batch", a.steps_with_batch},
        {"batch_refused", a.batch_refused},
        {"tokens_per_step", w.tokens_per_step},
        {"policy", policy},
        {"edits", o.edits},
        {"notes", w.notes},
        {"policy_changes", policy_changes},
        {"measured", summary_json(w.before_summary, w.tokens_per_step)},
        {"edited", summary_json(w.after_summary, w.tokens_per_step)},
        {"speedup", w.speedup()},
        {"band", band},
        {"spread", spread_json},
        {"metadata_build", metadata_json(build)},
        {"steps", steps}};
    write_stdout(j.dump(2) + "\n");
  } else {
    std::string csv = "metric,measured,edited\n";
    const auto row = [&](const std::string& name, double x, double y) { csv += fmt::format("{},{},{}\n", name, x, y); };
    row("step_us", w.before_summary.time_us, w.after_summary.time_us);
    for (const std::string& c : validate::step_classes())
      row(c + "_us", w.before_summary.class_us.at(c), w.after_summary.class_us.at(c));
    row("gaps_us", w.before_summary.gaps_us, w.after_summary.gaps_us);
    row("tokens_per_step", w.tokens_per_step, w.tokens_per_step);
    row("kernels", w.before_summary.kernels, w.after_summary.kernels);
    row("tokens_per_s", tokens_per_s(w.tokens_per_step, w.before_summary.time_us),
        tokens_per_s(w.tokens_per_step, w.after_summary.time_us));
    const validate::StepSpread& spread = w.measured_spread;
    csv += fmt::format("step_sd_us,{},\nstep_mean_ci95_us,{},\n", spread.sd_us, spread.mean_ci95_us);
    write_stdout(csv);
  }
}

}  // namespace

void add_step_command(CLI::App& app) {
  auto o = std::make_shared<StepCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "step", "decode steps of a measured kernel trace: time per kernel class, and the uplift of edits");
  cmd->add_option("--trace", o->trace,
                  "torch.profiler / Perfetto Chrome-trace JSON or rocprofv3 kernel-trace CSV (.gz ok)")
      ->required();
  cmd->add_option("--rules", o->rules, "kernel name rules: a data/step name or a .json path")->capture_default_str();
  cmd->add_option("--edit", o->edits,
                  "policy=SPEC | fuse=SEL[+SEL...][:us=T|:bytes=B[:written=W]] | remove=SEL[+SEL...] | gaps=T | "
                  "metadata=host|device-serial|device-parallel (SEL: a step class or re:REGEX); repeat, applied in "
                  "order");
  cmd->add_option("--op-bytes", o->op_bytes,
                  "JSON of the bytes each kernel reads and writes ({ops: [{match, read_bytes, written_bytes, "
                  "..._per_request}]}): fuse and remove edits then weigh what they change in L2 for the attention "
                  "after");
  cmd->add_option("--step-batches", o->step_batches,
                  "JSON of each step's batch as the server logged it ({steps: [{kv_lens: [...], qo_lens: [...]} or "
                  "{requests, context}, ...]}, one per step of the trace, the skipped ones included): policy and "
                  "metadata edits plan it in place of the flags' batch");
  o->policy_flag = cmd->add_option("--policy", o->policy,
                                   "the split policy that planned the traced MLA kernels (default: the scenario's "
                                   "policy A, else aiter-v1)");
  cmd->add_option("--skip", o->skip, "steps left out at the start (warm-up)")->capture_default_str();
  cmd->add_option("--step-gap-us", o->step_gap_us,
                  "a trace without step markers: a device gap longer than this ends a step (0: automatic)");
  cmd->add_flag("--no-markers", o->no_markers, "ignore the trace's step markers and cut at gaps");
  cmd->add_flag("--steps", o->steps, "text: every step's measured and edited time");
  cmd->add_option("--format", o->format, "text, json or csv")->capture_default_str();
  o->workload.add_to(*cmd);
  cmd->callback([o] { run_step(*o); });
}

}  // namespace mlasim::cli
