#include "mlasim/sim/kernel_choice.h"

#include <algorithm>

namespace mlasim::sim {
namespace {

// Our Hopper bf16 kernel covers one pass of rows on one SM; wider tiles take a workgroup pair. The fp8 kernel's
// one-pass tiles stream their KV once at the memory's pace, its wider ones re-read it pass after pass under their
// math: two regimes, each fitted apart where measured.
KernelClassId wgmma_class(const Plan& plan, const DecodeBatch& batch) {
  if (batch.kv_dtype == DType::fp8)
    return plan_tile_rows(plan, batch) > kernel_class(KernelClassId::wgmma_fp8).pass_rows
               ? KernelClassId::wgmma_fp8
               : KernelClassId::wgmma_fp8_onepass;
  return plan_tile_rows(plan, batch) > kernel_class(KernelClassId::wgmma_bf16).pass_rows
             ? KernelClassId::wgmma_bf16_pair
             : KernelClassId::wgmma_bf16;
}

KernelClassId portable_class(const DecodeBatch& batch) {
  return batch.kv_dtype == DType::fp8 ? KernelClassId::portable_fp8 : KernelClassId::portable_bf16;
}

}  // namespace

int plan_tile_rows(const Plan& plan, const DecodeBatch& batch) {
  int rows = 1;
  for (const WorkInfo& w : plan.works) rows = std::max(rows, w.qo_rows());
  const int heads = plan.derived.num_heads_eff > 0 ? plan.derived.num_heads_eff : batch.q_heads;
  return rows * heads;
}

KernelClassId auto_kernel_class(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu) {
  if (gpu.vendor == "nvidia") {
    const bool hopper = gpu.arch.starts_with("sm_90");
    return hopper && hopper_kernel_runs(batch.kv_dtype, batch.page_size) ? wgmma_class(plan, batch)
                                                                         : portable_class(batch);
  }
  if (plan.kernel == KernelKind::grid) return KernelClassId::grid_nonpersistent;
  // AITER's fp8 ASM kernels by packed tile: 128-row tiles (128 heads, or fewer heads times several query tokens,
  // e.g. 32 heads x qlen 4) run the wide-tile kernels, narrower ones the 16-head kernels.
  if (batch.q_dtype == DType::fp8 && batch.kv_dtype == DType::fp8)
    return plan_tile_rows(plan, batch) >= 128 ? KernelClassId::asm_a8w8_qh128 : KernelClassId::asm_a8w8_qh16;
  return KernelClassId::asm_a16w16;
}

std::optional<KernelClassId> kernel_class_of_run(const std::string& kernel, const Plan& plan,
                                                 const DecodeBatch& batch) {
  if (kernel.find("wgmma") != std::string::npos) return wgmma_class(plan, batch);
  if (kernel.rfind("mla_decode_", 0) == 0) return portable_class(batch);
  return std::nullopt;
}

}  // namespace mlasim::sim
