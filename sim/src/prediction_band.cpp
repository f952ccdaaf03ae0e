#include "mlasim/sim/prediction_band.h"

#include <cmath>
#include <fmt/format.h>

#include "mlasim/model/input_error.h"

namespace mlasim::sim {

PredictionBand prediction_band(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                               const Metrics& base) {
  PredictionBand b;
  const std::optional<KernelClassId> kernel = parse_kernel_class(base.kernel_class);
  b.kernel_us = base.kernel_us;
  b.kernel_class = base.kernel_class;
  double sq = 0;
  for (const auto& [key, p] : gpu.params) {
    if (!std::isfinite(p.std_error) || p.std_error <= 0) continue;
    b.calibrated = true;
    CostParams moved = params;
    // Up by sigma; where that leaves the parameter's range (an efficiency near 1) down by sigma; where both do (a
    // value the rows bound from one side only, sigma above the value) halved.
    for (double v : {p.value + p.std_error, p.value - p.std_error, p.value / 2}) {
      try {
        set_cost_param(moved, key, v);
        break;
      } catch (const InputError&) {
      }
    }
    const double d = simulate_metrics(plan, batch, gpu, moved, kernel).kernel_us / base.kernel_us - 1.0;
    sq += d * d;
  }
  b.params_pct = 100.0 * std::sqrt(sq);
  if (auto it = gpu.model_error.find(b.kernel_class); it != gpu.model_error.end()) {
    b.calibrated = true;
    b.residual_pct = it->second.rms_pct;
    b.has_residual = true;
  }
  b.sigma_pct = std::hypot(b.params_pct, b.residual_pct);
  return b;
}

std::string prediction_band_text(const PredictionBand& band, const std::string& gpu_name) {
  if (!band.calibrated)
    return fmt::format(
        "uncertainty: unknown (the {} profile carries no parameter errors and no held-out error; "
        "docs/validation.md)\n",
        gpu_name);
  // A class the profile's fit held no rows out of has no measured model error: say so rather than print 0 %.
  const std::string held_out =
      band.has_residual ? fmt::format("held-out {} {:.1f} %", band.kernel_class, band.residual_pct)
                        : fmt::format("no held-out rows of {}: the band is the parameters' alone", band.kernel_class);
  return fmt::format("uncertainty: kernel_us {:.2f} +- {:.1f} % ({:.2f} .. {:.2f}; parameters {:.1f} %, {})\n",
                     band.kernel_us, band.sigma_pct, band.low_us(), band.high_us(), band.params_pct, held_out);
}

}  // namespace mlasim::sim
