#include "mlasim/validate/kernel_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "mlasim/model/input_error.h"
#include "mlasim/validate/gzip_file.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {
namespace {

using nlohmann::json;

constexpr long long kMaxGridBlocks = 1LL << 31;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw InputError("trace", origin + ": " + what);
}

// Device-side events: kernels, and the copies and fills the runtime puts on a stream.
bool is_device_event(const std::string& cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" ||
         cat == "Memset";
}

// Host-side ranges that mark one decode step each: 1 for torch.profiler's ProfilerStep#N, 2 for a range named
// decode_step..., 0 for any other event.
int step_marker_kind(const std::string& cat, const std::string& name) {
  if (cat != "user_annotation") return 0;
  static const std::regex profiler_step(R"(^ProfilerStep#\d+$)");
  if (std::regex_match(name, profiler_step)) return 1;
  return name.rfind("decode_step", 0) == 0 ? 2 : 0;
}

// A timestamp (ts, within ±1e18 us) or a duration (dur, 0..1e12 us), so that sums over a trace stay finite.
double number_field(const json& e, const char* key, const std::string& where, bool duration) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_number()) fail(where, std::string(key) + ": must be a number");
  const double v = it->get<double>();
  const double lo = duration ? 0 : -1e18, hi = duration ? 1e12 : 1e18;
  if (!std::isfinite(v) || v < lo || v > hi)
    fail(where, std::string(key) + ": must be a number in [" + (duration ? "0, 1e12" : "-1e18, 1e18") + "] us, got " +
                    it->dump());
  return v;
}

// The correlation id of an event that has one (args.correlation), else -1.
long long correlation_of(const json& e) {
  const auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return -1;
  const auto c = args->find("correlation");
  return c != args->end() && c->is_number_integer() ? c->get<long long>() : -1;
}

// args.grid: three block counts, each 1..2^31 (CUDA's largest grid is 2^31 - 1 blocks along x).
std::array<long long, 3> grid_field(const json& g, const std::string& where) {
  std::array<long long, 3> out{0, 0, 0};
  if (!g.is_array() || g.size() != 3) fail(where, "args.grid: must be a list of three block counts [x, y, z]");
  for (size_t i = 0; i < 3; ++i) {
    if (!g[i].is_number_integer() || g[i].get<long long>() < 1 || g[i].get<long long>() > kMaxGridBlocks)
      fail(where, "args.grid[" + std::to_string(i) + "]: must be an integer in [1, 2147483648], got " + g[i].dump());
    out[i] = g[i].get<long long>();
  }
  return out;
}

KernelTrace parse_chrome_trace(const json& j, const std::string& origin) {
  const json* events = &j;
  if (j.is_object()) {
    const auto it = j.find("traceEvents");
    if (it == j.end()) fail(origin, "traceEvents: is missing (a Chrome trace from torch.profiler or Perfetto)");
    events = &*it;
  }
  if (!events->is_array()) fail(origin, "traceEvents: must be a list of events");
  KernelTrace t;
  t.origin = origin;
  t.format = "chrome-trace";
  struct Marker {
    double begin, end;
  };
  std::vector<Marker> markers, decode_markers;
  std::map<long long, double> launch_ts;  // correlation id -> host launch time
  std::map<long long, std::array<long long, 3>> launch_grid;
  std::vector<long long> kernel_correlation;
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string where = origin + ": traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object()) fail(where, "must be an object");
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || ph->get<std::string>() != "X") continue;  // only complete events
    const auto cat_it = e.find("cat");
    const std::string cat = cat_it != e.end() && cat_it->is_string() ? cat_it->get<std::string>() : "";
    const auto name_it = e.find("name");
    const std::string name = name_it != e.end() && name_it->is_string() ? name_it->get<std::string>() : "";
    if (is_device_event(cat)) {
      if (name.empty()) fail(where, "name: a kernel needs a name");
      const double ts = number_field(e, "ts", where, false);
      const double dur = number_field(e, "dur", where, true);
      TraceKernel k{name, ts, ts + dur, 0, -1, {0, 0, 0}};
      if (const auto args = e.find("args"); args != e.end() && args->is_object()) {
        if (const auto s = args->find("stream"); s != args->end() && s->is_number_integer())
          k.stream = s->get<long long>();
        if (const auto g = args->find("grid"); g != args->end()) k.grid = grid_field(*g, where);
      }
      t.kernels.push_back(std::move(k));
      kernel_correlation.push_back(correlation_of(e));
    } else if (const int kind = step_marker_kind(cat, name); kind > 0) {
      const double ts = number_field(e, "ts", where, false);
      (kind == 1 ? markers : decode_markers).push_back({ts, ts + number_field(e, "dur", where, true)});
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (const long long c = correlation_of(e); c >= 0) {
        launch_ts[c] = number_field(e, "ts", where, false);
        // ROCm's tracer may record the grid on the launch rather than on the kernel.
        if (const auto g = e.at("args").find("grid"); g != e.at("args").end()) launch_grid[c] = grid_field(*g, where);
      }
    }
  }
  for (size_t k = 0; k < t.kernels.size(); ++k)
    if (t.kernels[k].grid[0] == 0)
      if (const auto g = launch_grid.find(kernel_correlation[k]); g != launch_grid.end()) t.kernels[k].grid = g->second;
  // One kind of marker cuts the steps: torch.profiler's steps when the trace has them (a decode_step range inside
  // one would otherwise cut each step in two), else the decode_step ranges.
  if (markers.empty()) markers = std::move(decode_markers);
  std::sort(markers.begin(), markers.end(), [](const Marker& a, const Marker& b) { return a.begin < b.begin; });
  t.marked_steps = static_cast<int>(markers.size());
  for (size_t k = 0; k < t.kernels.size() && !markers.empty(); ++k) {
    const auto launch = launch_ts.find(kernel_correlation[k]);
    if (launch == launch_ts.end()) continue;
    // The last marker that began at or before the launch, if the launch falls inside it.
    const auto after = std::upper_bound(markers.begin(), markers.end(), launch->second,
                                        [](double ts, const Marker& m) { return ts < m.begin; });
    if (after == markers.begin()) continue;
    const auto m = std::prev(after);
    if (launch->second <= m->end) t.kernels[k].marked_step = static_cast<int>(m - markers.begin());
  }
  return t;
}

long long integer_cell(const std::string& cell, const std::string& where, const char* column,
                       const char* unit = " (ns)") {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != cell.size() || v < 0)
    fail(where, std::string(column) + ": must be an integer >= 0" + unit + ", got '" + cell + "'");
  return v;
}

KernelTrace parse_rocprof_csv(std::string_view text, const std::string& origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_record(line, origin + " line 1");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column.emplace(header[i], i);
  for (const char* name : {"Kernel_Name", "Start_Timestamp", "End_Timestamp"})
    if (!column.count(name))
      fail(origin, std::string("line 1: missing column '") + name +
                       "' (a rocprofv3 kernel trace: Kernel_Name, Start_Timestamp, End_Timestamp)");
  const auto stream_column = column.count("Stream_Id") ? column.find("Stream_Id") : column.find("Queue_Id");
  // The launch grid, when the trace has all six columns: work-items per axis over the workgroup's size.
  const char* const grid_columns[] = {"Grid_Size_X",      "Grid_Size_Y",      "Grid_Size_Z",
                                      "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"};
  const bool has_grid =
      std::all_of(std::begin(grid_columns), std::end(grid_columns), [&](const char* c) { return column.count(c) > 0; });
  KernelTrace t;
  t.origin = origin;
  t.format = "rocprof";
  for_each_csv_record(
      in, origin, header.size(), [&](const std::vector<std::string>& cells, const std::string& where, int) {
        const std::string& name = cells[column.at("Kernel_Name")];
        if (name.empty()) fail(where, "Kernel_Name: a kernel needs a name");
        const long long start = integer_cell(cells[column.at("Start_Timestamp")], where, "Start_Timestamp");
        const long long end = integer_cell(cells[column.at("End_Timestamp")], where, "End_Timestamp");
        if (end < start)
          fail(where, "End_Timestamp: must not be before Start_Timestamp (" + std::to_string(start) + ")");
        TraceKernel k{name, static_cast<double>(start) / 1e3, static_cast<double>(end) / 1e3, 0, -1, {0, 0, 0}};
        const bool row_has_grid = has_grid && std::none_of(std::begin(grid_columns), std::end(grid_columns),
                                                           [&](const char* c) { return cells[column.at(c)].empty(); });
        if (row_has_grid)
          for (size_t axis = 0; axis < 3; ++axis) {
            const long long items = integer_cell(cells[column.at(grid_columns[axis])], where, grid_columns[axis], "");
            const long long group =
                integer_cell(cells[column.at(grid_columns[axis + 3])], where, grid_columns[axis + 3], "");
            if (group < 1) fail(where, std::string(grid_columns[axis + 3]) + ": must be an integer >= 1, got 0");
            if (items > kMaxGridBlocks * 1024)
              fail(where,
                   std::string(grid_columns[axis]) + ": must be at most 2^41 work-items, got " + std::to_string(items));
            k.grid[axis] = (items + group - 1) / group;
          }
        if (stream_column != column.end()) {
          const std::string& s = cells[stream_column->second];
          if (!s.empty()) k.stream = integer_cell(s, where, stream_column->first.c_str());
        }
        t.kernels.push_back(std::move(k));
      });
  return t;
}

}  // namespace

KernelTrace parse_kernel_trace(std::string_view text, const std::string& origin) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) fail(origin, "is empty (needs a Chrome trace or a rocprofv3 kernel trace)");
  KernelTrace t;
  if (text[first] == '{' || text[first] == '[') {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {
      fail(origin, std::string("is not valid JSON (") + e.what() + ")");
    }
    t = parse_chrome_trace(j, origin);
  } else {
    t = parse_rocprof_csv(text, origin);
  }
  if (t.kernels.empty()) fail(origin, "has no GPU kernel (Chrome trace: events of cat kernel; rocprofv3: rows)");
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start_us < b.start_us; });
  return t;
}

KernelTrace read_kernel_trace(const std::string& path) {
  return parse_kernel_trace(read_maybe_gzip(path, "trace"), path);
}

}  // namespace mlasim::validate
