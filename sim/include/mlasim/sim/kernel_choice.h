#pragma once
// Which stage-1 kernel class runs a plan: the rule our runner's `auto` uses on NVIDIA GPUs, and AITER's kernel
// selection on AMD ones. The runner (kernels/src/mla_runner.cu) calls hopper_kernel_runs() too, so the model and
// the measurements agree on the class by construction.
#include <optional>
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/kernel_class.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// Where a Hopper (wgmma) kernel can run, `auto` takes it for bf16 KV and for fp8 KV on pages of 16 tokens or
// more; fp8 on smaller pages goes to the portable kernel (docs/kernels.md has the measurements behind this).
inline bool hopper_kernel_runs(DType kv_dtype, int page_size) { return kv_dtype != DType::fp8 || page_size >= 16; }

// Packed rows of the plan's widest tile: query rows of its widest work times the heads per tile.
int plan_tile_rows(const Plan& plan, const DecodeBatch& batch);

// The class `auto` runs for `plan` on `gpu`: NVIDIA sm_90 profiles get our Hopper kernels where
// hopper_kernel_runs() (the bf16 pair above 64 rows), other NVIDIA profiles our portable kernels; AMD profiles
// get AITER's grid kernel for grid plans and its persistent ASM kernel by dtype and packed tile rows otherwise.
KernelClassId auto_kernel_class(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu);

// The class of a measured run from the stage-1 kernel its row names ("mla_decode_wgmma_persistent+mla_reduce",
// "mla_decode_persistent", ...); nullopt for a name that is none of ours (imported AMD rows), where the
// caller falls back to auto_kernel_class().
std::optional<KernelClassId> kernel_class_of_run(const std::string& kernel, const Plan& plan, const DecodeBatch& batch);

}  // namespace mlasim::sim
