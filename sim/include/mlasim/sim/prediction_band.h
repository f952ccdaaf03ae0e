#pragma once
// How sure a predicted kernel time is: the spread the fitted parameters' uncertainty gives (each parameter with a
// 1-sigma error in the profile moved by that sigma, the relative changes added in quadrature: correlations are
// left out) and the model's held-out error for the kernel class (profile `model_error`), combined in quadrature.
#include <string>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

struct PredictionBand {
  double kernel_us = 0;
  double params_pct = 0;      // 1 sigma from the parameters' uncertainty, %
  double residual_pct = 0;    // the class's held-out RMS error, %
  bool has_residual = false;  // the profile holds a held-out error for the class (else residual_pct is 0, unknown)
  double sigma_pct = 0;       // both in quadrature
  std::string kernel_class;
  bool calibrated = false;  // false: the profile has neither parameter errors nor a held-out error for the class
  double low_us() const { return kernel_us * (1 - sigma_pct / 100); }
  double high_us() const { return kernel_us * (1 + sigma_pct / 100); }
};

// `base`: the plan's metrics with `params` as simulated already (its kernel class is the one re-simulated).
PredictionBand prediction_band(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                               const Metrics& base);

// "kernel_us 1234.5 +- 6.2 % (1158.0 .. 1310.9; parameters 0.4 %, held-out wgmma-bf16 6.2 %)", with "no held-out
// rows of CLASS" where the profile has none for the class, or a line saying the profile is not calibrated.
std::string prediction_band_text(const PredictionBand& band, const std::string& gpu_name);

}  // namespace mlasim::sim
