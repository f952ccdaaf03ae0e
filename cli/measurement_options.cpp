#include "measurement_options.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/validate/measurement_import.h"
#include "mlasim/validate/measurement_sessions.h"

namespace mlasim::cli {

void MeasurementOptions::add_to(CLI::App& app) {
  CLI::Option* measurements =
      app.add_option("--measurements", files,
                     "measurement file: CSV (project or public format), AITER test_mla_persistent.py log, or "
                     "rocprofv3 kernel trace; repeat for several");
  if (files_required) measurements->required();
  app.add_option("--sessions", sessions,
                 "each: every row as measured; median: rows of one configuration in several --measurements files "
                 "(sessions of one campaign) become one row, each time the median over the sessions")
      ->capture_default_str();
  app.add_option("--measurements-format", input_format,
                 "format of the --measurements files: auto (detected from the content), csv, aiter-log, rocprof")
      ->capture_default_str();
  // The workload flags bring --gpu; here it names the GPU the measurements were taken on.
  workload.add_to(app);
  app.get_option("--gpu")
      ->description(
          "GPU profile name or FILE.json; only rows measured on it are used, and imported logs and traces "
          "are attributed to it [mi355x]")
      ->each([this](const std::string& v) { gpu = v; });
  policy_flag = app.add_option("--policy", policy,
                               "rocprof traces: the policy that planned the traced kernels (default: the scenario's "
                               "policy A, else aiter-v1)");
}

std::string MeasurementOptions::profile_path() const {
  if (gpu.size() > 5 && gpu.ends_with(".json")) return gpu;
  std::string lower = gpu;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return (std::filesystem::path(data_dir()) / "gpus" / (lower + ".json")).string();
}

validate::MeasurementRow MeasurementOptions::trace_workload() const {
  const std::optional<sim::Scenario> scenario = workload.scenario();
  const sim::Workload w = workload.workload(scenario);
  validate::MeasurementRow row;
  try {
    row = validate::measurement_row_of(w, choose_policy(policy_flag, policy, scenario, "A", 0, "aiter-v1"));
  } catch (const InputError& e) {
    if (e.field() != "qo_lens") throw;
    throw InputError("qo-lens", "a kernel trace's rows need one query length for every request");
  }
  row.gpu.clear();  // the trace's GPU is --gpu, set where the rows are read
  return row;
}

std::vector<validate::MeasurementRow> MeasurementOptions::rows_for(const Gpu& g) const {
  const validate::MeasurementFormat format = validate::parse_measurement_format(input_format, "measurements-format");
  if (sessions != "each" && sessions != "median")
    throw InputError("sessions", "must be each or median, got '" + sessions + "'");
  validate::ImportContext context;
  context.gpu = g.name;
  context.num_cu = g.num_cu;
  bool have_workload = false;
  std::vector<validate::MeasurementRow> rows;
  size_t others = 0;
  for (const std::string& f : files) {
    validate::MeasurementFormat file_format = format;
    if (file_format == validate::MeasurementFormat::rocprof ||
        (file_format == validate::MeasurementFormat::automatic && !have_workload)) {
      // Only a trace needs the workload; read the file's head to know.
      std::ifstream in(f, std::ios::binary);
      std::string head;
      std::getline(in, head);
      if (file_format == validate::MeasurementFormat::rocprof ||
          validate::detect_measurement_format(head) == validate::MeasurementFormat::rocprof) {
        if (!have_workload) context.workload = trace_workload();
        have_workload = true;
      }
    }
    validate::MeasurementImport imported = validate::import_measurement_file(f, file_format, context);
    for (const std::string& note : imported.notes) std::cerr << "note: " << note << "\n";
    for (validate::MeasurementRow& r : imported.rows) {
      if (r.gpu == g.name) {
        rows.push_back(std::move(r));
      } else {
        ++others;
      }
    }
  }
  if (rows.empty())
    throw InputError("measurements", "no rows for GPU '" + g.name + "' in " + file_list() + " (" +
                                         std::to_string(others) + " rows of other GPUs)");
  if (sessions == "median") {
    validate::SessionMedian m = validate::median_over_sessions(rows);
    std::cerr << "note: --sessions median: " << rows.size() << " rows are " << m.rows.size() << " configurations, "
              << m.in_every_session << " of them measured in " << m.max_sessions << " sessions\n";
    return std::move(m.rows);
  }
  return rows;
}

std::string MeasurementOptions::file_list() const { return join_names(files); }

}  // namespace mlasim::cli
