#include "mlasim/validate/measured_timeline.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/validate/gzip_file.h"

namespace mlasim::validate {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* kFormat = "mlasim-measured-timeline-1";
// Chrome-trace processes: stage 1 and the reduce, each with one thread (track) per CU.
constexpr int kStage1Pid = 1;
constexpr int kReducePid = 2;
constexpr int kMaxCu = 1 << 16;
constexpr double kMaxUs = 1e9;    // a 1000 s kernel: anything larger is a broken clock
constexpr double kHalfNs = 5e-4;  // us

// Chrome traces count microseconds; three decimals keep the nanosecond stamps.
double us3(double us) { return std::round(us * 1000.0) / 1000.0; }

ordered_json metadata_event(const char* name, int pid, std::optional<int> tid, const std::string& value) {
  ordered_json e = {{"name", name}, {"ph", "M"}, {"pid", pid}};
  if (tid) e["tid"] = *tid;
  e["args"] = {{"name", value}};
  return e;
}

ordered_json complete_event(const std::string& name, const char* cat, int pid, int tid, double begin, double end,
                            ordered_json args) {
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", us3(begin)},
          {"dur", us3(us3(end) - us3(begin))},  // so ts + dur is the end as written, to a rounding step
          {"args", std::move(args)}};
}

struct EventTimes {
  double begin = 0, end = 0;
};

EventTimes event_times(const JsonFields& f) {
  if (!f.has("ts")) throw InputError(f.name("ts"), "is missing");
  if (!f.has("dur")) throw InputError(f.name("dur"), "is missing");
  const double ts = f.real("ts", 0, 0, kMaxUs);
  return {ts, ts + f.real("dur", 0, 0, kMaxUs)};
}

// The SM clock's cycles over an event (0 where the run did not record them): a 32-bit counter's difference.
uint64_t sm_cycles_of(const JsonFields& args) {
  return static_cast<uint64_t>(std::llround(args.real("sm_cycles", 0, 0, 4294967295.0)));
}

const std::set<std::string> kEventKeys = {"name", "cat", "ph", "pid", "tid", "ts", "dur", "args", "id", "s"};

}  // namespace

double MeasuredTimeline::stage1_end_us() const {
  double end = 0;
  for (const MeasuredWork& w : works) end = std::max(end, w.end_us);
  return end;
}

double MeasuredTimeline::end_us() const {
  double end = stage1_end_us();
  for (const MeasuredReduceBlock& b : reduce) end = std::max(end, b.end_us);
  return end;
}

double MeasuredTimeline::overhead_pct() const {
  return kernel_us > 0 && instrumented_kernel_us > 0 ? 100.0 * (instrumented_kernel_us / kernel_us - 1.0) : 0.0;
}

void attach_plan_facts(MeasuredTimeline& t, const sim::Plan& plan) {
  for (MeasuredWork& w : t.works) {
    if (w.work < 0 || w.work >= plan.num_works())
      throw InputError("timeline", fmt::format("work {} is not in the plan ({} works)", w.work, plan.num_works()));
    const sim::WorkInfo& info = plan.works[static_cast<size_t>(w.work)];
    w.request = plan.request_of(info);
    w.kv_start = info.kv_start;
    w.kv_end = info.kv_end;
    w.partial = info.is_partial();
  }
}

ordered_json measured_timeline_to_json(const MeasuredTimeline& t) {
  ordered_json events = ordered_json::array();
  events.push_back(metadata_event("process_name", kStage1Pid, std::nullopt, "stage 1: " + t.kernel));
  events.push_back(metadata_event("process_name", kReducePid, std::nullopt, "reduce"));
  std::vector<int> stage1_cus, reduce_cus;
  for (const MeasuredWork& w : t.works) stage1_cus.push_back(w.cu);
  for (const MeasuredReduceBlock& b : t.reduce) reduce_cus.push_back(b.cu);
  for (auto* cus : {&stage1_cus, &reduce_cus}) {
    std::sort(cus->begin(), cus->end());
    cus->erase(std::unique(cus->begin(), cus->end()), cus->end());
  }
  for (int cu : stage1_cus) events.push_back(metadata_event("thread_name", kStage1Pid, cu, fmt::format("CU {}", cu)));
  for (int cu : reduce_cus) events.push_back(metadata_event("thread_name", kReducePid, cu, fmt::format("CU {}", cu)));
  for (const MeasuredWork& w : t.works) {
    ordered_json args = {{"work", w.work},
                         {"workgroup", w.workgroup},
                         {"request", w.request},
                         {"kv_start", w.kv_start},
                         {"kv_end", w.kv_end},
                         {"partial", w.partial},
                         {"first_kv_ts", us3(w.first_kv_us)}};
    if (w.sm_cycles > 0) args["sm_cycles"] = w.sm_cycles;
    events.push_back(complete_event(fmt::format("work {}", w.work), "work", kStage1Pid, w.cu, w.begin_us, w.end_us,
                                    std::move(args)));
    // The fixed part as a nested slice, so the trace viewers show it inside its work.
    if (w.first_kv_us > w.begin_us)
      events.push_back(
          complete_event("fixed", "fixed", kStage1Pid, w.cu, w.begin_us, w.first_kv_us, {{"work", w.work}}));
  }
  for (const MeasuredReduceBlock& b : t.reduce) {
    ordered_json args = {{"block", b.block}};
    if (b.sm_cycles > 0) args["sm_cycles"] = b.sm_cycles;
    events.push_back(complete_event(fmt::format("reduce {}", b.block), "reduce", kReducePid, b.cu, b.begin_us, b.end_us,
                                    std::move(args)));
  }

  ordered_json facts = {
      {"format", kFormat}, {"workload", sim::workload_to_json(t.workload)}, {"policy", t.policy}, {"kernel", t.kernel}};
  if (!t.config_id.empty()) facts["config_id"] = t.config_id;
  facts["device"] = t.device;
  facts["driver"] = t.driver;
  if (t.sm_clock_mhz) facts["sm_clock_mhz"] = *t.sm_clock_mhz;
  facts["commit"] = t.commit;
  facts["date"] = t.date;
  facts["command"] = t.command;
  facts["kernel_us"] = t.kernel_us;
  facts["instrumented_kernel_us"] = t.instrumented_kernel_us;
  facts["clock_step_ns"] = t.clock_step_ns;
  return {{"displayTimeUnit", "ns"}, {"otherData", {{"mlasim", facts}}}, {"traceEvents", events}};
}

bool is_measured_timeline(const json& j) {
  return j.is_object() && j.contains("traceEvents") && j.contains("otherData") && j["otherData"].is_object() &&
         j["otherData"].contains("mlasim");
}

MeasuredTimeline measured_timeline_from_json(const json& j) {
  const JsonFields top(j, "", {"displayTimeUnit", "otherData", "traceEvents"}, "measured timeline");
  const json& other = top.at("otherData");
  if (!other.is_object() || !other.contains("mlasim"))
    throw InputError("otherData.mlasim", "is missing: not a timeline written by mlasim validate --timeline");
  const JsonFields f(other.at("mlasim"), "otherData.mlasim",
                     {"format", "workload", "policy", "kernel", "config_id", "device", "driver", "sm_clock_mhz",
                      "commit", "date", "command", "kernel_us", "instrumented_kernel_us", "clock_step_ns"},
                     "measured timeline");
  if (f.text("format", "") != kFormat)
    throw InputError(f.name("format"), std::string("must be \"") + kFormat + "\", got " + f.at("format").dump());
  MeasuredTimeline t;
  t.workload = sim::workload_from_json(f.at("workload"), f.name("workload"));
  t.policy = f.text("policy", "");
  if (t.policy.empty()) throw InputError(f.name("policy"), "is missing");
  t.kernel = f.text("kernel", "");
  t.config_id = f.text("config_id", "");
  t.device = f.text("device", "");
  t.driver = f.text("driver", "");
  if (f.has("sm_clock_mhz")) t.sm_clock_mhz = f.integer("sm_clock_mhz", 0, 1, 100000);
  t.commit = f.text("commit", "");
  t.date = f.text("date", "");
  t.command = f.text("command", "");
  t.kernel_us = f.real("kernel_us", 0, 0, kMaxUs);
  t.instrumented_kernel_us = f.real("instrumented_kernel_us", 0, 0, kMaxUs);
  t.clock_step_ns = f.real("clock_step_ns", 0, 0, 1e9);

  const json& events = top.at("traceEvents");
  if (!events.is_array()) throw InputError("traceEvents", "must be a list of trace events");
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string path = fmt::format("traceEvents[{}]", i);
    const JsonFields e(events[i], path, kEventKeys, "trace event");
    if (e.text("ph", "") != "X") continue;  // metadata and any other phase: names, not times
    const std::string cat = e.text("cat", "");
    if (cat != "work" && cat != "reduce") continue;  // the nested fixed slices repeat args.first_kv_ts
    const int pid = e.integer("pid", 0, 0, 1 << 30);
    const int cu = e.integer("tid", -1, 0, kMaxCu);
    if (!e.has("tid")) throw InputError(e.name("tid"), "is missing");
    const EventTimes times = event_times(e);
    const JsonFields args(e.at("args"), e.name("args"),
                          cat == "work" ? std::set<std::string>{"work", "workgroup", "request", "kv_start", "kv_end",
                                                                "partial", "first_kv_ts", "sm_cycles"}
                                        : std::set<std::string>{"block", "sm_cycles"},
                          "event argument");
    if (cat == "work") {
      if (pid != kStage1Pid)
        throw InputError(e.name("pid"), fmt::format("a work event must be in process {}", kStage1Pid));
      MeasuredWork w;
      w.work = args.integer("work", -1, 0, 1 << 30);
      if (w.work < 0) throw InputError(args.name("work"), "is missing");
      w.workgroup = args.integer("workgroup", 0, 0, 64);
      w.cu = cu;
      w.begin_us = times.begin;
      w.end_us = times.end;
      w.first_kv_us = args.real("first_kv_ts", times.begin, 0, kMaxUs);
      // The file keeps times to the nanosecond, and ts + dur can land a rounding step beside a stamp equal to the
      // event's end: within half a nanosecond the stamp is the event's edge.
      if (w.first_kv_us < w.begin_us - kHalfNs || w.first_kv_us > w.end_us + kHalfNs)
        throw InputError(args.name("first_kv_ts"),
                         fmt::format("must lie in the event [{}, {}], got {}", w.begin_us, w.end_us, w.first_kv_us));
      w.first_kv_us = std::clamp(w.first_kv_us, w.begin_us, w.end_us);
      w.request = args.integer("request", 0, 0, 1 << 30);
      w.kv_start = args.integer("kv_start", 0, 0, INT32_MAX);
      w.kv_end = args.integer("kv_end", w.kv_start, w.kv_start, INT32_MAX);
      w.partial = args.boolean("partial", false);
      w.sm_cycles = sm_cycles_of(args);
      t.works.push_back(w);
    } else {
      if (pid != kReducePid)
        throw InputError(e.name("pid"), fmt::format("a reduce event must be in process {}", kReducePid));
      MeasuredReduceBlock b;
      b.block = args.integer("block", 0, 0, 1 << 30);
      b.cu = cu;
      b.begin_us = times.begin;
      b.end_us = times.end;
      b.sm_cycles = sm_cycles_of(args);
      t.reduce.push_back(b);
    }
  }
  if (t.works.empty()) throw InputError("traceEvents", "holds no stage-1 work event (cat \"work\")");
  std::sort(t.works.begin(), t.works.end(), [](const MeasuredWork& a, const MeasuredWork& b) {
    return std::tie(a.cu, a.begin_us, a.work) < std::tie(b.cu, b.begin_us, b.work);
  });
  std::sort(t.reduce.begin(), t.reduce.end(),
            [](const MeasuredReduceBlock& a, const MeasuredReduceBlock& b) { return a.block < b.block; });
  return t;
}

MeasuredTimeline load_measured_timeline(const std::string& path) {
  return parse_file_json(read_json_maybe_gzip(path, "timeline"), path, "timeline", measured_timeline_from_json);
}

}  // namespace mlasim::validate
