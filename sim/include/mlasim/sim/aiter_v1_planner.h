#pragma once
// AITER's persistent MLA decode planner, get_mla_metadata_v1 in fast mode (v1.2), bit for bit.
// The arguments mirror the real call, so a plan dumped from AITER can be reproduced from its inputs.
#include <cstdint>
#include <string>
#include <vector>

#include "mlasim/model/dtype.h"
#include "mlasim/sim/kernel_traits.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// How NS (the split budget that sets the per-cluster payload) is chosen.
enum class SplitBudget {
  flat,           // AITER HEAD: NS = NC if msb < 0 else min(NC, msb * B)
  adaptive_sqrt,  // aiter PR #4899 in auto mode: NS_eff = clamp(lrintf(1.2 * sum_tiles sqrt(nblk + OV)), 1, NS)
  machine_width,  // aiter PR #5212 in auto mode: NS_eff = clamp(lrintf(1.2 * sqrt(W * NS)), 1, NS)
};

struct AiterV1Args {
  Arch arch = Arch::gfx950;  // the device AITER runs on (parse_arch of its arch name)
  int num_cu = 256;
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int num_heads_per_head_k = 16;
  int num_heads_k = 1;
  bool is_causal = true;
  int page_size = 1;
  int kv_granularity = 16;
  int max_seqlen_qo = 1;
  int uni_seqlen_qo = 1;
  int max_split_per_batch = -1;
  bool fast_mode = true;
  bool intra_batch_mode = false;
  bool experimental = false;  // AITER_ENABLE_EXPERIMENTAL
  bool is_cp_round_robin = false;
  SplitBudget budget = SplitBudget::flat;
  float split_coef = 1.2f;                 // MLA_V12_SPLIT_COEF of the adaptive rules
  std::vector<int32_t> seqlens_qo_indptr;  // [B+1], query rows
  std::vector<int32_t> seqlens_kv_indptr;  // [B+1], pages
  std::vector<int32_t> kv_last_page_lens;  // [B]

  // Checks the arguments as AITER's asserts do, plus the hazards the spec lists (msb = 0 divides by zero,
  // non-uniform qlen with folding or query splitting reads out of range / stale memory). Throws InputError.
  void validate() const;
};

// get_mla_metadata_info_v1 (spec section 8). Throws InputError("works", ...) when work_info would exceed
// kMaxWorksPerPlan rows.
BufferSizes aiter_v1_buffer_sizes(const AiterV1Args& args);

// Runs the v1.2 planner (spec section 4). Throws InputError for arguments AITER rejects or mis-plans.
Plan plan_aiter_v1(const AiterV1Args& args);

}  // namespace mlasim::sim

#include "mlasim/sim/split_policy.h"

namespace mlasim::sim {

// The arguments a serving engine passes for the request's batch on its GPU (vLLM's: page_size and
// kv_granularity from the batch, uniform qlen when the lengths agree, num_heads_k = 1), with the request's
// clusters as CUs (0 = all of them). max_split_per_batch is left at -1; callers set it.
AiterV1Args make_aiter_v1_args(const PlanRequest& request);

// vLLM's max_split_per_batch: -1 below 128 heads, else max(1, min(cdiv(CUs, batch), 32)).
int vllm_max_split_per_batch(int heads, int num_cu, int batch);

}  // namespace mlasim::sim
