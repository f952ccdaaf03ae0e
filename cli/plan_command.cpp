// mlasim plan: the plan a policy builds for a batch, or for every case of a reference JSONL file.
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/plan_json.h"
#include "mlasim/sim/plan_text.h"
#include "output.h"
#include "workload_options.h"

namespace mlasim::cli {
namespace {

struct PlanOptions {
  WorkloadOptions workload;
  std::string policy = "aiter-v1";
  CLI::Option* policy_flag = nullptr;
  std::string format = "text";
  std::string cases;
};

void run_cases(const PlanOptions& o) {
  std::ifstream in(o.cases);
  if (!in) throw InputError("cases", "cannot read '" + o.cases + "'");
  std::string out, line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      throw InputError("cases", where + "not valid JSON");
    }
    if (!j.is_object() || !j.contains("inputs")) throw InputError("cases", where + "needs an 'inputs' object");
    sim::Plan plan;
    try {
      plan = sim::plan_aiter_v1(sim::aiter_args_from_json(j["inputs"]));
    } catch (const InputError& e) {
      throw InputError("cases", where + e.what());
    }
    if (o.format == "json") {
      nlohmann::json r = sim::plan_to_json(plan);
      nlohmann::json line_out;
      line_out["id"] = j.value("id", std::to_string(line_no));
      for (const char* k : {"derived", "model", "buffer_sizes", "outputs"}) line_out[k] = std::move(r[k]);
      out += line_out.dump() + "\n";
    } else {
      plan.policy = "aiter-v1 (case " + j.value("id", std::to_string(line_no)) + ")";
      out += sim::format_plan_text(plan, j["inputs"].value("page_size", 1)) + "\n";
    }
  }
  write_stdout(out);
}

void run_plan(const PlanOptions& o) {
  check_format(o.format, {"text", "json"});
  if (!o.cases.empty()) return run_cases(o);
  const auto scenario = o.workload.scenario();
  const sim::WorkloadContext ctx = sim::resolve(o.workload.workload(scenario));
  const sim::Evaluation e = sim::evaluate(choose_policy(o.policy_flag, o.policy, scenario, "A", 0, "aiter-v1"), ctx);
  const sim::Plan& plan = *e.plan;
  if (o.format == "json") {
    nlohmann::json j = sim::plan_to_json(plan);
    j["policy"] = plan.policy;
    j["gpu"] = ctx.gpu.name;
    write_stdout(j.dump(2) + "\n");
  } else {
    write_stdout(sim::describe_workload(ctx.batch, ctx.gpu, ctx.clusters) + "\n" +
                 sim::format_plan_text(plan, ctx.batch.page_size));
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto opts = std::make_shared<PlanOptions>();
  CLI::App* cmd =
      app.add_subcommand("plan", "show the plan a split policy builds (work lists per cluster, reduce maps)");
  opts->workload.add_to(*cmd);
  opts->policy_flag = cmd->add_option("--policy", opts->policy,
                                      "policy spec NAME[:key=value,...], e.g. aiter-v1:max_split_per_batch=16 "
                                      "[aiter-v1, or the scenario's A]");
  cmd->add_option("--format", opts->format, "text or json")->capture_default_str();
  cmd->add_option("--cases", opts->cases,
                  "JSONL file of planner inputs ('inputs' objects); one JSON line out per case");
  cmd->callback([opts] { run_plan(*opts); });
}

}  // namespace mlasim::cli
