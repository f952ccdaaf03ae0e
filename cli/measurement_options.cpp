#include "measurement_options.h"

#include <algorithm>
#include <filesystem>

#include "mlasim/model/input_error.h"

namespace mlasim::cli {

void MeasurementOptions::add_to(CLI::App& app) {
  app.add_option("--measurements", files, "measurement CSV (project or public format); repeat for several")->required();
  app.add_option("--gpu", gpu, "GPU profile name or FILE.json; only rows measured on it are used")
      ->capture_default_str();
}

std::string MeasurementOptions::profile_path() const {
  if (gpu.size() > 5 && gpu.ends_with(".json")) return gpu;
  std::string lower = gpu;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return (std::filesystem::path(data_dir()) / "gpus" / (lower + ".json")).string();
}

std::vector<validate::MeasurementRow> MeasurementOptions::rows_for(const Gpu& g) const {
  std::vector<validate::MeasurementRow> rows;
  size_t others = 0;
  for (const std::string& f : files)
    for (validate::MeasurementRow& r : validate::read_measurement_csv(f)) {
      if (r.gpu == g.name) {
        rows.push_back(std::move(r));
      } else {
        ++others;
      }
    }
  if (rows.empty())
    throw InputError("measurements", "no rows for GPU '" + g.name + "' in " + file_list() + " (" +
                                         std::to_string(others) + " rows of other GPUs)");
  return rows;
}

std::string MeasurementOptions::file_list() const {
  std::string s;
  for (const std::string& f : files) s += (s.empty() ? "" : ", ") + f;
  return s;
}

}  // namespace mlasim::cli
