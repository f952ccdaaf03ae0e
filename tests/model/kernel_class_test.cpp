#include "mlasim/model/kernel_class.h"

#include <gtest/gtest.h>

namespace mlasim {
namespace {

const KernelClass& cls(KernelClassId id) { return kernel_class(id); }

TEST(KernelClass, PassesCoverEachCusShareOfTheRows) {
  EXPECT_EQ(kv_passes(cls(KernelClassId::portable_fp8), 16), 1);
  EXPECT_EQ(kv_passes(cls(KernelClassId::portable_fp8), 48), 2);
  EXPECT_EQ(kv_passes(cls(KernelClassId::wgmma_fp8), 128), 8);
  EXPECT_EQ(kv_passes(cls(KernelClassId::wgmma_bf16_pair), 128), 1);  // 64 rows on each SM of the pair
  EXPECT_EQ(kv_passes(cls(KernelClassId::wgmma_bf16_pair), 256), 2);
}

TEST(KernelClass, TheMathRunsOnPaddedRows) {
  // The portable kernel's 16-row tile splits the tokens between its two groups: no padding. A 48-row tile runs
  // two 32-row passes, the second with one group's rows unused.
  const KernelClass& portable = cls(KernelClassId::portable_fp8);
  EXPECT_EQ(math_rows_per_cu(portable, 16), 16);
  EXPECT_EQ(math_rows_per_cu(portable, 8), 16);
  EXPECT_EQ(math_rows_per_cu(portable, 32), 32);
  EXPECT_EQ(math_rows_per_cu(portable, 48), 64);
  // A wgmma is 64 rows tall: 16 heads at qlen 1 cost the math of 64 rows.
  const KernelClass& wgmma = cls(KernelClassId::wgmma_bf16);
  EXPECT_EQ(math_rows_per_cu(wgmma, 16), 64);
  EXPECT_EQ(math_rows_per_cu(wgmma, 64), 64);
  EXPECT_EQ(math_rows_per_cu(cls(KernelClassId::wgmma_bf16_pair), 128), 64);
  EXPECT_EQ(math_rows_per_cu(cls(KernelClassId::wgmma_bf16_pair), 192), 128);
  // fp8 wgmma passes are 16 rows (the MMA's N), so nothing is padded past a multiple of 16.
  EXPECT_EQ(math_rows_per_cu(cls(KernelClassId::wgmma_fp8), 48), 48);
  // AMD classes: one pass of up to 128 rows, padded to the 16-row MFMA only.
  EXPECT_EQ(math_rows_per_cu(cls(KernelClassId::asm_a8w8_qh16), 16), 16);
  EXPECT_EQ(math_rows_per_cu(cls(KernelClassId::asm_a8w8_qh128), 128), 128);
}

TEST(KernelClass, PaddingNeverLosesRows) {
  for (const KernelClass& c : kernel_classes())
    for (int rows = 1; rows <= 512; ++rows) {
      const int per_cu = (rows + c.cus_per_cluster - 1) / c.cus_per_cluster;
      EXPECT_GE(math_rows_per_cu(c, rows), per_cu) << c.name << " " << rows;
      EXPECT_LT(math_rows_per_cu(c, rows), per_cu + c.pass_rows) << c.name << " " << rows;
    }
}

TEST(KernelClass, OnlyTheFp8WgmmaCopiesPageByPage) {
  // Its producer issues one copy (five tensor boxes) per page of 16 to 64 tokens, per 64-token tile of a longer
  // page; pages under 16 tokens go by 16-byte copies, whose cost is in the class's rate. Its one-pass tiles are
  // the same kernel.
  for (KernelClassId id : {KernelClassId::wgmma_fp8, KernelClassId::wgmma_fp8_onepass}) {
    const KernelClass& fp8 = cls(id);
    EXPECT_EQ(page_copies(fp8, 4096, 16), 256);
    EXPECT_EQ(page_copies(fp8, 4096, 64), 64);
    EXPECT_EQ(page_copies(fp8, 4096, 256), 64);
    EXPECT_EQ(page_copies(fp8, 100, 16), 7);  // the last page's copy too
    EXPECT_EQ(page_copies(fp8, 4096, 1), 0);
    EXPECT_EQ(page_copies(fp8, 0, 16), 0);
  }
  for (const KernelClass& c : kernel_classes()) {
    if (c.id == KernelClassId::wgmma_fp8 || c.id == KernelClassId::wgmma_fp8_onepass) continue;
    EXPECT_EQ(page_copies(c, 4096, 16), 0) << c.name;
  }
}

TEST(KernelClass, OnlyTheFp8OnePassTilesTakeAnotherClasssValues) {
  for (const KernelClass& c : kernel_classes()) {
    if (c.id == KernelClassId::wgmma_fp8_onepass)
      EXPECT_EQ(c.params_from, KernelClassId::wgmma_fp8);
    else
      EXPECT_FALSE(c.params_from.has_value()) << c.name;
  }
}

// A class cut from another by its tile width is the same kernel: the table repeats the wider class's structure for
// it, and the two rows must not drift apart.
TEST(KernelClass, AClassCutFromAnotherHasItsStructure) {
  for (const KernelClass& c : kernel_classes()) {
    if (!c.params_from) continue;
    const KernelClass& wider = cls(*c.params_from);
    EXPECT_EQ(c.pass_rows, wider.pass_rows) << c.name;
    EXPECT_EQ(c.cus_per_cluster, wider.cus_per_cluster) << c.name;
    EXPECT_EQ(c.min_pass_rows, wider.min_pass_rows) << c.name;
    EXPECT_EQ(c.page_copy_tokens, wider.page_copy_tokens) << c.name;
    EXPECT_EQ(c.copy_tile_tokens, wider.copy_tile_tokens) << c.name;
    EXPECT_EQ(c.reduce, wider.reduce) << c.name;
  }
}

}  // namespace
}  // namespace mlasim
