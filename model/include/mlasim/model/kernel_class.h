#pragma once
// The stage-1 kernels mlasim models, described by data: how a kernel class walks a tile (rows per pass over the
// KV, compute units per cluster) and which reduce follows it.
// What a class costs on a given GPU (fixed cost, bandwidth, compute rate, ...) is not here: those are parameters
// of the GPU profile (KernelClassParams in cost_model.h), fitted or assumed per class, each with provenance.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlasim {

enum class KernelClassId {
  portable_bf16,      // ours: mma.sync kernel, bf16 KV (any NVIDIA GPU; AMD builds of our kernels)
  portable_fp8,       // ours: mma.sync kernel, fp8 KV converted in registers
  wgmma_bf16,         // ours: Hopper wgmma kernel, bf16 KV, tiles of up to 64 packed rows on one SM
  wgmma_bf16_pair,    // ours: the same kernel on tiles of more than 64 rows: a workgroup pair on two SMs
  wgmma_fp8,          // ours: Hopper fp8 kernel, 16-row passes that each re-read the work's KV
  wgmma_fp8_onepass,  // ours: the same kernel on tiles of one 16-row pass (16 heads), which stream their KV once
  asm_a8w8_qh16,      // AITER: persistent ASM kernel, fp8 Q and KV, 16-head tiles (and folded head counts)
  asm_a8w8_qh128,     // AITER: persistent ASM kernel, fp8 Q and KV, 128-head tiles
  asm_a16w16,         // AITER: persistent ASM kernel, bf16 Q and KV
  grid_nonpersistent  // AITER: the non-persistent (Gluon/Triton) grid kernel with Triton's stage-2 reduce
};
inline constexpr int kKernelClassCount = 10;

enum class ReduceKind {
  aiter,  // mla_reduce_v1's launch rule (grid or persistent by size; ours follows it too)
  triton  // one program per (request tile, head)
};

struct KernelClass {
  KernelClassId id;
  const char* name;         // "wgmma-bf16": the key prefix in a profile's params ("wgmma-bf16.t_fix_us")
  const char* description;  // one line for listings
  int pass_rows;            // packed rows one pass over the KV covers on one CU; wider tiles take several passes
  int cus_per_cluster;      // CUs (SMs) one cluster occupies
  int min_pass_rows;        // rows the math of a one-pass tile is padded to (the MMA's row granularity)
  int page_copy_tokens;     // pages of at least this many tokens are copied one page at a time (at most
                            // copy_tile_tokens at once), each copy issued by one producer thread (the fp8 wgmma's
                            // tensor boxes); 0: the copies do not follow the pages
  int copy_tile_tokens;     // tokens of one KV tile (the most one page copy moves)
  ReduceKind reduce;
  // The class whose values a profile's unset ones take before the global fallback (cost_model.h): a class cut out
  // of another by its tile width keeps the wider class's fit where its own is not measured.
  std::optional<KernelClassId> params_from;
};

// Our kernels (portable, wgmma) take bf16 Q whatever the workload's q dtype (kernels/: the problem's Q is bf16; the
// fp8 wgmma splits each Q row into two fp8 rows for its QK MMAs and runs PV in fp16), so their math runs at the bf16
// rate, as does AITER's a16w16 kernel; only AITER's a8w8 kernels (and its grid kernel on fp8 Q and KV) multiply fp8
// by fp8.
bool takes_bf16_q(KernelClassId id);

// Every class, in KernelClassId order.
const std::array<KernelClass, kKernelClassCount>& kernel_classes();
const KernelClass& kernel_class(KernelClassId id);
// The class named `name` ("wgmma-bf16", ...), if any.
std::optional<KernelClassId> parse_kernel_class(std::string_view name);
// "portable-bf16, portable-fp8, ..." for messages.
std::string kernel_class_names();

// Passes a work of `tile_rows` packed rows makes over its KV on class `c` (each CU of a cluster takes its share
// of the rows).
int kv_passes(const KernelClass& c, int tile_rows);
// Packed rows a work's math runs on, per CU, padding included: a lone pass rounds its rows up to
// `min_pass_rows`, and every pass of a wider tile runs all `pass_rows` rows (the last one's unused rows too).
int math_rows_per_cu(const KernelClass& c, int tile_rows);
// Page copies a producer issues to stream `tokens` KV tokens once on pages of `page_size` tokens: one per page, or
// per tile of a longer page; 0 when the class's copies do not follow the pages or the pages are too short.
int64_t page_copies(const KernelClass& c, int64_t tokens, int page_size);

}  // namespace mlasim
