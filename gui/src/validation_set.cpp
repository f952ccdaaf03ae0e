#include "mlasim/gui/validation_set.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {
namespace {

// The GPU most rows name (the first named on a tie), or empty for no rows.
std::string gpu_named_in(const std::vector<validate::MeasurementRow>& rows) {
  std::map<std::string, int> counts;
  std::string best;
  for (const validate::MeasurementRow& r : rows) {
    if (r.gpu.empty()) continue;
    const int n = ++counts[r.gpu];
    if (best.empty() || n > counts[best]) best = r.gpu;
  }
  return best;
}

}  // namespace

ValidationSet load_validation_set(const std::string& path, const ValidationSource& source) {
  ValidationSet set;
  set.path = path;
  // Logs and traces name no GPU: they were measured on the GPU asked for, else on the explorer's.
  const std::string attributed = source.gpu.empty() ? source.fallback_gpu : source.gpu;
  validate::ImportContext context;
  context.gpu = attributed;
  context.num_cu = sim::gpu_profile(attributed)->num_cu;
  context.workload = source.trace_workload;
  context.workload.gpu.clear();  // the importer sets it
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("measurements", "cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  set.format = validate::detect_measurement_format(text.str());
  validate::MeasurementImport imported = validate::import_measurements(text.str(), path, set.format, context);
  set.notes = std::move(imported.notes);
  if (imported.rows.empty()) throw InputError("measurements", path + ": holds no measurement rows");
  set.gpu = source.gpu.empty() ? gpu_named_in(imported.rows) : source.gpu;
  if (set.gpu.empty()) set.gpu = attributed;

  std::vector<validate::MeasurementRow> rows;
  for (validate::MeasurementRow& r : imported.rows) {
    if (r.gpu == set.gpu)
      rows.push_back(std::move(r));
    else
      ++set.other_gpu_rows;
  }
  if (rows.empty())
    throw InputError("measurements", path + ": no rows for GPU '" + set.gpu + "' (" +
                                         std::to_string(set.other_gpu_rows) + " rows of other GPUs)");
  // The profile the explorer plans with (read once per process), so a point opened in the views predicts the same.
  try {
    set.run = validate::evaluate_profile(*sim::gpu_profile(set.gpu), rows);
  } catch (const InputError& e) {
    // prepare_row names the line ("policy: line 5: ..."); the window also needs the file.
    throw InputError(e.field(), path + " " + e.message());
  }
  set.points = validation_points(set.run);
  std::vector<double> errors;
  for (const ValidationPoint& p : set.points) errors.push_back(p.error_pct());
  set.stats = validate::error_stats(errors);
  return set;
}

sim::Workload row_workload(const validate::PreparedRow& row, const std::string& gpu) {
  const DecodeBatch& b = row.batch;
  sim::Workload w;
  w.gpu = gpu;
  const bool uniform = std::all_of(b.kv_lens.begin(), b.kv_lens.end(), [&b](int l) { return l == b.kv_lens.front(); });
  w.batch = uniform ? sim::BatchSpec::uniform(b.size(), b.kv_lens.front()) : sim::BatchSpec::list(b.kv_lens);
  w.qlen = b.max_qo_len();
  if (b.uniform_qo_len() < 0) w.qo_lens = b.qo_lens;
  w.heads = b.q_heads;
  w.kv_heads = b.kv_heads;
  w.q_dtype = b.q_dtype;
  w.kv_dtype = b.kv_dtype;
  w.page_size = b.page_size;
  // Named only where it differs from the workload's default (AITER's op test uses 32 for 64-head fp8), so editing
  // the page size afterwards moves the granularity with it as usual.
  if (b.kv_granularity != w.granularity()) w.kv_granularity = b.kv_granularity;
  w.causal = b.causal;
  w.topk = b.topk;
  w.clusters = row.row.clusters;
  return w;
}

}  // namespace mlasim::gui
