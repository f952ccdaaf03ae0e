#pragma once
// A GPU hardware profile, loaded from data/gpus/<name>.json.
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mlasim/model/dtype.h"

namespace mlasim {

// One number of a profile and where it comes from.
struct GpuParam {
  double value = 0.0;
  std::string kind;                                             // "datasheet", "fitted", "measured" or "assumed"
  std::string source;                                           // citation, or the calibration run that produced it
  double std_error = std::numeric_limits<double>::quiet_NaN();  // 1 sigma of a fitted value (NaN: none known)
};

// How far the model's predictions with this profile's parameters stray from held-out measurements of one kernel
// class: the band `mlasim predict` prints beside every time.
struct ModelError {
  double rms_pct = 0;   // root mean square of the relative errors, %
  double mape_pct = 0;  // mean |relative error|, %
  int rows = 0;
  std::string source;
};

// How far the model's ratio of two plans of one workload (predicted over measured, less 1) strays over held-out
// sessions of one kernel class: the band `mlasim step` gives a policy edit's change (docs/step.md §3).
struct RatioError {
  double median_pct = 0;  // median |error|, %
  double p90_pct = 0;     // 90th percentile |error|, %
  int pairs = 0;          // two policies measured on one workload
  std::string source;
};

// How far a decode-step edit other than a policy change misses the measured step, per site (a run of fused kernels,
// or a removed kernel), over the validation runs' edits of one kind: the band `mlasim step` gives a fuse or a
// remove edit (docs/step.md §3).
struct EditError {
  double median_us = 0;  // median |measured - predicted| step time per site, us
  double p90_us = 0;     // 90th percentile of it
  int edits = 0;         // edits measured
  std::string source;
};

struct Gpu {
  std::string name;          // file stem, e.g. "mi355x"
  std::string display_name;  // e.g. "AMD Instinct MI355X"
  std::string vendor;        // "amd" or "nvidia"
  std::string arch;          // "gfx950", "gfx942", "sm_90"
  int num_cu = 0;            // compute units (AMD) or SMs (NVIDIA)
  int wave_size = 64;
  double hbm_tbps = 0.0;  // datasheet peak HBM bandwidth
  double clock_mhz = 0.0;
  double lds_per_cu_kib = 0.0;
  double l2_mib = 0.0;
  double bf16_tflops = 0.0;  // dense matrix peak
  double fp8_tflops = 0.0;
  std::map<std::string, std::string> sources;  // datasheet field -> citation
  // Cost-model parameters (datasheet-derived, assumed or fitted), each with provenance.
  std::map<std::string, GpuParam> params;
  // Held-out prediction error per kernel class name (written by `mlasim calibrate`).
  std::map<std::string, ModelError> model_error;
  // Held-out ratio error of two plans per kernel class name (written by scripts/ratio_error_fit.py).
  std::map<std::string, RatioError> ratio_error;
  // Measured error of the fuse and remove edits per site, by edit kind (written by scripts/edit_error_fit.py).
  std::map<std::string, EditError> edit_error;

  double matrix_tflops(DType t) const { return t == DType::fp8 ? fp8_tflops : bf16_tflops; }
  // The parameter `key`, or `fallback` when the profile does not carry it.
  double param(const std::string& key, double fallback) const;
};

// Loads a profile by name (looked up in the data directory) or from a path ending in ".json".
// Throws InputError("gpu", ...) listing the known names when it cannot.
Gpu load_gpu(const std::string& name_or_path);

// Parses a profile from JSON text; `origin` names the file in error messages.
Gpu parse_gpu_json(const std::string& text, const std::string& origin);

// Serializes a profile (with its parameters and provenance) as pretty JSON.
std::string gpu_to_json(const Gpu& gpu);
// One parameter as a profile holds it: value, kind, source, and std_error when known.
nlohmann::ordered_json gpu_param_json(const GpuParam& p);
// One kernel class's held-out error as a profile holds it under "model_error".
nlohmann::ordered_json model_error_json(const ModelError& e);
// One kernel class's held-out ratio error as a profile holds it under "ratio_error".
nlohmann::ordered_json ratio_error_json(const RatioError& e);
// One edit kind's measured error as a profile holds it under "edit_error".
nlohmann::ordered_json edit_error_json(const EditError& e);

// Names of the built-in profiles (data/gpus/*.json), sorted.
std::vector<std::string> builtin_gpu_names();

// The data directory: $MLASIM_DATA_DIR if set, else the checkout's data/.
std::string data_dir();

}  // namespace mlasim
