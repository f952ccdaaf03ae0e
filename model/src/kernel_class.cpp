#include "mlasim/model/kernel_class.h"

#include <algorithm>
#include <string>
#include <vector>

#include "mlasim/model/text_lists.h"

namespace mlasim {

const std::array<KernelClass, kKernelClassCount>& kernel_classes() {
  // pass_rows, CUs per cluster and a lone pass's padded rows are the kernels' own structure (docs/kernels.md; AITER's
  // kernel table in ../shared/reference/aiter-v1-planner.md for the AMD classes, whose tiles are one pass of up to
  // 128 rows, padded here only to the 16-row MFMA). Our portable kernel splits a 16-row tile's tokens between its
  // two groups; a wgmma is 64 rows tall; the fp8 wgmma's pass is its N of 16 rows. Only the fp8 wgmma copies its KV
  // page by page (five tensor boxes per page of 16 or more tokens); the others copy 16-byte chunks whatever the page.
  static const std::array<KernelClass, kKernelClassCount> table{{
      {KernelClassId::portable_bf16, "portable-bf16", "ours, mma.sync, bf16 KV, 32-row passes", 32, 1, 16, 0, 0,
       ReduceKind::aiter, std::nullopt},
      {KernelClassId::portable_fp8, "portable-fp8", "ours, mma.sync, fp8 KV, 32-row passes", 32, 1, 16, 0, 0,
       ReduceKind::aiter, std::nullopt},
      {KernelClassId::wgmma_bf16, "wgmma-bf16", "ours, Hopper wgmma, bf16 KV, tiles of <= 64 rows on one SM", 64, 1, 64,
       0, 0, ReduceKind::aiter, std::nullopt},
      {KernelClassId::wgmma_bf16_pair, "wgmma-bf16-pair",
       "ours, Hopper wgmma, bf16 KV, tiles of > 64 rows on a workgroup pair (two SMs)", 64, 2, 64, 0, 0,
       ReduceKind::aiter, std::nullopt},
      {KernelClassId::wgmma_fp8, "wgmma-fp8", "ours, Hopper wgmma, fp8 KV, 16-row passes re-reading the KV", 16, 1, 16,
       16, 64, ReduceKind::aiter, std::nullopt},
      {KernelClassId::wgmma_fp8_onepass, "wgmma-fp8-onepass",
       "ours, Hopper wgmma, fp8 KV, tiles of one 16-row pass (16 heads) streaming the KV once", 16, 1, 16, 16, 64,
       ReduceKind::aiter, KernelClassId::wgmma_fp8},
      {KernelClassId::asm_a8w8_qh16, "asm-a8w8-qh16",
       "AITER persistent ASM, fp8 Q/KV, tiles of < 128 packed rows (16 heads)", 128, 1, 16, 0, 0, ReduceKind::aiter,
       std::nullopt},
      {KernelClassId::asm_a8w8_qh128, "asm-a8w8-qh128",
       "AITER persistent ASM, fp8 Q/KV, 128-row tiles (128 heads, or 32 heads x qlen 4)", 128, 1, 16, 0, 0,
       ReduceKind::aiter, std::nullopt},
      {KernelClassId::asm_a16w16, "asm-a16w16", "AITER persistent ASM, bf16 Q/KV", 128, 1, 16, 0, 0, ReduceKind::aiter,
       std::nullopt},
      {KernelClassId::grid_nonpersistent, "grid-nonpersistent",
       "AITER non-persistent grid kernel (Gluon/Triton) with Triton's stage-2 reduce", 128, 1, 16, 0, 0,
       ReduceKind::triton, std::nullopt},
  }};
  return table;
}

bool takes_bf16_q(KernelClassId id) {
  switch (id) {
    case KernelClassId::portable_bf16:
    case KernelClassId::portable_fp8:
    case KernelClassId::wgmma_bf16:
    case KernelClassId::wgmma_bf16_pair:
    case KernelClassId::wgmma_fp8:
    case KernelClassId::wgmma_fp8_onepass:
    case KernelClassId::asm_a16w16: return true;
    case KernelClassId::asm_a8w8_qh16:
    case KernelClassId::asm_a8w8_qh128:
    case KernelClassId::grid_nonpersistent: break;
  }
  return false;
}

const KernelClass& kernel_class(KernelClassId id) { return kernel_classes()[static_cast<size_t>(id)]; }

std::optional<KernelClassId> parse_kernel_class(std::string_view name) {
  for (const KernelClass& c : kernel_classes())
    if (name == c.name) return c.id;
  return std::nullopt;
}

std::string kernel_class_names() {
  std::vector<std::string> names;
  for (const KernelClass& c : kernel_classes()) names.emplace_back(c.name);
  return join_names(names);
}

namespace {

template <class T>
T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Each CU of a cluster takes its share of a tile's packed rows.
int rows_per_cu(const KernelClass& c, int tile_rows) { return ceil_div(std::max(tile_rows, 1), c.cus_per_cluster); }

}  // namespace

int kv_passes(const KernelClass& c, int tile_rows) { return ceil_div(rows_per_cu(c, tile_rows), c.pass_rows); }

int64_t page_copies(const KernelClass& c, int64_t tokens, int page_size) {
  if (c.page_copy_tokens <= 0 || page_size < c.page_copy_tokens || tokens <= 0) return 0;
  return ceil_div<int64_t>(tokens, std::min(page_size, c.copy_tile_tokens));
}

int math_rows_per_cu(const KernelClass& c, int tile_rows) {
  const int rows = rows_per_cu(c, tile_rows);
  const int passes = ceil_div(rows, c.pass_rows);
  return passes > 1 ? passes * c.pass_rows : ceil_div(rows, c.min_pass_rows) * c.min_pass_rows;
}

}  // namespace mlasim
