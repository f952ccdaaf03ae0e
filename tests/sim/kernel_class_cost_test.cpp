// Kernel classes in the simulator: passes over the KV, CU pairs, the memory curve and the prediction band.
#include <gtest/gtest.h>

#include <cmath>

#include "mlasim/sim/kernel_choice.h"
#include "mlasim/sim/prediction_band.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {
namespace {

// An H100-like profile with nothing fitted: every class inherits the globals.
Gpu bare_h100() {
  Gpu g = load_gpu("h100");
  g.params.clear();
  g.model_error.clear();
  return g;
}

DecodeBatch batch_of(int batch, int context, int heads, int qlen, DType kv, int page) {
  DecodeBatch b = DecodeBatch::uniform(batch, context, qlen);
  b.q_heads = heads;
  b.q_dtype = DType::bf16;
  b.kv_dtype = kv;
  b.page_size = page;
  b.kv_granularity = std::max(page, 16);
  return b;
}

TEST(KernelChoice, FollowsTheRunnersAutoRuleOnHopper) {
  const Gpu g = bare_h100();
  auto cls = [&](int heads, int qlen, DType kv, int page) {
    const DecodeBatch b = batch_of(8, 4096, heads, qlen, kv, page);
    return auto_kernel_class(make_policy("aiter-v1")->plan({b, g, 0}), b, g);
  };
  EXPECT_EQ(cls(16, 1, DType::bf16, 64), KernelClassId::wgmma_bf16);
  EXPECT_EQ(cls(16, 4, DType::bf16, 64), KernelClassId::wgmma_bf16);  // 64 packed rows: one SM
  EXPECT_EQ(cls(128, 1, DType::bf16, 64), KernelClassId::wgmma_bf16_pair);
  EXPECT_EQ(cls(16, 1, DType::fp8, 16), KernelClassId::wgmma_fp8_onepass);  // 16 packed rows: one pass
  EXPECT_EQ(cls(16, 2, DType::fp8, 16), KernelClassId::wgmma_fp8);          // 32: two passes over the KV
  EXPECT_EQ(cls(128, 1, DType::fp8, 64), KernelClassId::wgmma_fp8);
  EXPECT_EQ(cls(16, 1, DType::fp8, 1), KernelClassId::portable_fp8);  // the runner's page-size rule
  EXPECT_TRUE(hopper_kernel_runs(DType::fp8, 16));
  EXPECT_FALSE(hopper_kernel_runs(DType::fp8, 8));
}

// Our kernels take bf16 Q (model/kernel_class.h): on them a q-fp8 workload costs what a q-bf16 one does, while
// AITER's a8w8 kernels multiply at the fp8 rate.
TEST(KernelClassCost, OurKernelsRunBf16MathWhateverTheQDtype) {
  const Gpu h100 = load_gpu("h100");
  const auto kernel_us = [](const Gpu& g, DType q, int heads) {
    DecodeBatch b = batch_of(16, 8192, heads, 1, DType::fp8, 64);
    b.q_dtype = q;
    const Plan p = make_policy("aiter-v1")->plan({b, g, 0});
    return simulate_metrics(p, b, g, cost_params_for(g)).kernel_us;
  };
  EXPECT_DOUBLE_EQ(kernel_us(h100, DType::fp8, 128), kernel_us(h100, DType::bf16, 128));
  EXPECT_TRUE(takes_bf16_q(KernelClassId::wgmma_fp8));
  EXPECT_FALSE(takes_bf16_q(KernelClassId::asm_a8w8_qh128));
  // On an a8w8 class the same plan multiplies at the fp8 rate when Q is fp8, and is faster than on bf16 Q.
  const CostParams params = cost_params_for(h100);
  const auto a8w8_us = [&](DType q) {
    DecodeBatch b = batch_of(16, 8192, 128, 1, DType::fp8, 64);
    b.q_dtype = q;
    const Plan p = make_policy("aiter-v1")->plan({b, h100, 0});
    return simulate_metrics(p, b, h100, params, KernelClassId::asm_a8w8_qh128).stage1_us;
  };
  EXPECT_LT(a8w8_us(DType::fp8), a8w8_us(DType::bf16));
}

TEST(KernelClassCost, EachPassPaysItsFixedCostAndRereadsTheKv) {
  const Gpu g = bare_h100();
  const DecodeBatch b = batch_of(4, 8192, 16, 4, DType::fp8, 16);  // 64 packed rows: 4 passes of 16 on wgmma-fp8
  const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
  CostParams p = cost_params_for(g);
  const Metrics base = simulate_metrics(plan, b, g, p);
  EXPECT_EQ(base.kernel_class, "wgmma-fp8");
  set_cost_param(p, "wgmma-fp8.reread_fraction", 0.0);
  // Each of the 3 passes after the first re-reads the KV (reads beside it: the reduce's partials).
  EXPECT_NEAR(base.read_bytes - simulate_metrics(plan, b, g, p).read_bytes, 3.0 * base.kv_bytes,
              1e-6 * base.read_bytes);
  set_cost_param(p, "wgmma-fp8.t_pass_us", 10.0);
  const Metrics with_pass_cost = simulate_metrics(plan, b, g, p);
  set_cost_param(p, "wgmma-fp8.t_pass_us", 0.0);
  // Every work pays 4 passes x 10 us more in its fixed part.
  EXPECT_GE(with_pass_cost.stage1_us - simulate_metrics(plan, b, g, p).stage1_us, 40.0 - 1e-9);
}

TEST(KernelClassCost, APairClusterComputesOnTwoSmsAndHalvesThePlaces) {
  const Gpu g = bare_h100();
  const DecodeBatch b = batch_of(132, 4096, 128, 1, DType::bf16, 64);
  const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
  CostParams p = cost_params_for(g);
  set_cost_param(p, "wgmma-bf16-pair.beta_gbps", 1e4);  // compute-bound: only the matrix rate matters
  set_cost_param(p, "wgmma-bf16.beta_gbps", 1e4);
  p.b_hbm_tbps = 1e3;
  const Metrics pair = simulate_metrics(plan, b, g, p, KernelClassId::wgmma_bf16_pair);
  const Metrics single = simulate_metrics(plan, b, g, p, KernelClassId::wgmma_bf16);
  // Twice the compute per cluster but half the clusters at once: the same time when every place is busy.
  EXPECT_NEAR(pair.stage1_us, single.stage1_us, 0.05 * single.stage1_us);
  EXPECT_EQ(pair.kernel_class, "wgmma-bf16-pair");
}

TEST(MemoryCurve, ASoftKneeSharesLessThanTheSharpLimitNearSaturation) {
  const Gpu g = bare_h100();
  const DecodeBatch b = batch_of(132, 16384, 16, 1, DType::bf16, 64);
  const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
  CostParams p = cost_params_for(g);
  const double sharp = simulate_metrics(plan, b, g, p).stage1_us;
  p.bw_knee = 2.5;
  const double soft = simulate_metrics(plan, b, g, p).stage1_us;
  EXPECT_GT(soft, sharp);  // the curve never exceeds min(k beta, B)
  p.bw_knee = 64;          // a sharp knee approaches the sharp limit
  EXPECT_NEAR(simulate_metrics(plan, b, g, p).stage1_us, sharp, 0.03 * sharp);
}

// A class's own knee: the 16-head plan on every SM streams under it, the 128-head pair kernel under the GPU's.
TEST(MemoryCurve, AClassKneeShapesThatClassesCurveAlone) {
  const Gpu g = bare_h100();
  const DecodeBatch b16 = batch_of(132, 16384, 16, 1, DType::bf16, 64);
  const DecodeBatch b128 = batch_of(66, 16384, 128, 1, DType::bf16, 64);
  const Plan plan16 = make_policy("aiter-v1")->plan({b16, g, 0});
  const Plan plan128 = make_policy("aiter-v1")->plan({b128, g, 0});
  CostParams p = cost_params_for(g);
  p.bw_knee = 2.5;
  const double soft16 = simulate_metrics(plan16, b16, g, p, KernelClassId::wgmma_bf16).stage1_us;
  const double soft128 = simulate_metrics(plan128, b128, g, p, KernelClassId::wgmma_bf16_pair).stage1_us;
  set_cost_param(p, "wgmma-bf16.bw_knee", 4.3);
  EXPECT_LT(simulate_metrics(plan16, b16, g, p, KernelClassId::wgmma_bf16).stage1_us, 0.97 * soft16);
  EXPECT_DOUBLE_EQ(simulate_metrics(plan128, b128, g, p, KernelClassId::wgmma_bf16_pair).stage1_us, soft128);
}

// The band around the plan's own prediction with the profile's parameters.
PredictionBand band_of(const Plan& plan, const DecodeBatch& b, const Gpu& g) {
  const CostParams p = cost_params_for(g);
  return prediction_band(plan, b, g, p, simulate_metrics(plan, b, g, p));
}

TEST(PredictionBand, UncalibratedProfileSaysSo) {
  const Gpu g = bare_h100();
  const DecodeBatch b = batch_of(8, 4096, 16, 1, DType::bf16, 64);
  const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
  const PredictionBand band = band_of(plan, b, g);
  EXPECT_FALSE(band.calibrated);
  EXPECT_NE(prediction_band_text(band, "h100").find("unknown"), std::string::npos);
}

TEST(PredictionBand, CombinesParameterErrorsAndTheClassHeldOutError) {
  Gpu g = bare_h100();
  g.model_error["wgmma-bf16"] = ModelError{6.0, 5.0, 10, "test"};
  const DecodeBatch b = batch_of(64, 16384, 16, 1, DType::bf16, 64);
  const Plan plan = make_policy("aiter-v1")->plan({b, g, 0});
  PredictionBand band = band_of(plan, b, g);
  EXPECT_TRUE(band.calibrated);
  EXPECT_DOUBLE_EQ(band.sigma_pct, 6.0);  // no parameter errors
  // A bandwidth-bound run moves with the memory ceiling: 10 % more B is about 10 % less time.
  g.params["b_hbm_tbps"] = GpuParam{1.0, "fitted", "test", 0.1};  // far below what the SMs offer
  band = band_of(plan, b, g);
  EXPECT_GT(band.params_pct, 3.0);
  EXPECT_LT(band.params_pct, 12.0);
  EXPECT_NEAR(band.sigma_pct, std::hypot(band.params_pct, 6.0), 1e-9);
  EXPECT_NEAR(band.high_us(), band.kernel_us * (1 + band.sigma_pct / 100), 1e-9);
  EXPECT_NE(prediction_band_text(band, "h100").find("held-out wgmma-bf16 6.0 %"), std::string::npos);
  // A class without held-out rows: the band is the parameters' alone, and the text says so instead of "0.0 %".
  g.model_error.clear();
  band = band_of(plan, b, g);
  EXPECT_FALSE(band.has_residual);
  EXPECT_DOUBLE_EQ(band.sigma_pct, band.params_pct);
  EXPECT_NE(prediction_band_text(band, "h100").find("no held-out rows of wgmma-bf16"), std::string::npos);
}

}  // namespace
}  // namespace mlasim::sim
