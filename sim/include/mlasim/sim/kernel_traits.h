#pragma once
// The arch-specific rules of AITER's MLA planner, gathered in one value: which head counts the persistent
// kernels run natively, how heads fold into virtual batches, the packed tile width and tiles per request.
#include <string>
#include <vector>

#include "mlasim/model/dtype.h"

namespace mlasim::sim {

enum class Arch { gfx942, gfx950, other };

// A GPU profile's arch string ("gfx942", "gfx950", "gfx950:sramecc+"); anything else (e.g. "sm_90") is `other`.
// Read once per plan request (PlanRequest::arch) or reference case; the rules take the value.
Arch parse_arch(const std::string& arch);
// "gfx942", "gfx950", or "other targets" for messages.
std::string arch_name(Arch arch);

struct KernelTraitsQuery {
  Arch arch = Arch::gfx950;
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int num_heads_per_head_k = 16;
  int num_heads_k = 1;
  int max_seqlen_qo = 1;
  bool experimental = false;  // AITER_ENABLE_EXPERIMENTAL (HipKittens kernels)
};

struct KernelTraits {
  int cluster_multiplier = 1;  // m: 2 when the HK m16x4 kernel runs at occupancy 2
  bool hk_mtp = false;
  bool native = false;             // the kernels take these heads without folding
  bool supported = false;          // the planner's support check (spec H5)
  int qk_batch_ratio = 1;          // R: virtual batches per request after folding
  int heads_eff = 16;              // H: heads per virtual batch
  int packed_qo_len_per_wg = 128;  // P: packed rows per tile
  bool qo_splits = false;          // QS: query tokens split into several tiles

  // Qo tiles of a request with `qlen` query tokens, and query rows per tile.
  int tiles_for(int qlen) const;
  int tile_rows_for(int qlen) const;
};

// Spec 4.1 H2-H5, H8, H9.
KernelTraits aiter_kernel_traits(const KernelTraitsQuery& q);

// Total head counts (8..128, multiples of 8) the planner supports for this arch, dtypes and qlen.
std::vector<int> supported_head_counts(KernelTraitsQuery q);

// Our kernels (kernels/) have tile variants for 16 and 128 heads per virtual batch only; a plan that leaves
// another head count per tile (e.g. FlashMLA's scheduler on 64 heads) cannot run on them.
inline bool our_kernels_run_heads(int heads_per_tile) { return heads_per_tile == 16 || heads_per_tile == 128; }

// Tiles per request that get_mla_metadata_info_v1 sizes buffers with (spec 8.3).
int sizing_tiles_per_batch(Arch arch, DType q, DType kv, int heads, int max_seqlen_qo, bool experimental);

}  // namespace mlasim::sim
