#include "mlasim/sim/kernel_traits.h"

#include "mlasim/sim/int_math.h"

namespace mlasim::sim {

Arch parse_arch(const std::string& arch) {
  if (arch.starts_with("gfx942")) return Arch::gfx942;
  if (arch.starts_with("gfx950")) return Arch::gfx950;
  return Arch::other;
}

std::string arch_name(Arch arch) {
  switch (arch) {
    case Arch::gfx942: return "gfx942";
    case Arch::gfx950: return "gfx950";
    case Arch::other: break;
  }
  return "other targets";
}

int KernelTraits::tiles_for(int qlen) const {
  if (!qo_splits) return 1;
  return 2 * heads_eff > packed_qo_len_per_wg ? qlen : static_cast<int>(cdiv(qlen * heads_eff, packed_qo_len_per_wg));
}

int KernelTraits::tile_rows_for(int qlen) const { return static_cast<int>(cdiv(qlen, tiles_for(qlen))); }

KernelTraits aiter_kernel_traits(const KernelTraitsQuery& q) {
  KernelTraits t;
  const bool q8 = q.q_dtype == DType::fp8;
  const bool kv8 = q.kv_dtype == DType::fp8;
  const bool cdna3or4 = q.arch == Arch::gfx942 || q.arch == Arch::gfx950;
  const int nh = q.num_heads_k * q.num_heads_per_head_k;
  const int msq = q.max_seqlen_qo;

  // H2: the HipKittens m16x4 kernel runs two workgroups per CU.
  if (q.experimental && q.arch == Arch::gfx950 && nh * msq == 64 && q8 && kv8) t.cluster_multiplier = 2;

  // H3: native head counts.
  t.hk_mtp =
      cdna3or4 && q8 && kv8 && nh * msq == 128 && (nh == 16 || nh == 32 || nh == 64 || nh == 128) && q.experimental;
  t.native = nh == 16 || (cdna3or4 && nh == 64 && q8 && kv8 && msq == 1) || (q.arch == Arch::gfx950 && !q8 && !kv8) ||
             (q.arch == Arch::gfx942 && nh == 128 && q8 && kv8) ||
             (q.arch == Arch::gfx950 && q8 && kv8 && (nh == 32 || nh == 64 || nh == 128)) || t.hk_mtp;
  // Our own kernels (non-AMD targets) run 16- and 128-head tiles natively.
  if (q.arch == Arch::other) t.native = nh == 16 || nh == 128;

  // H4: fold other multiples of 16 into 16-head virtual batches.
  if (!t.native && nh % 16 == 0) {
    t.qk_batch_ratio = nh / 16;
    t.heads_eff = 16;
  } else {
    t.qk_batch_ratio = 1;
    t.heads_eff = nh;
  }
  const int h = t.heads_eff;

  // H5: the planner's support check.
  t.supported = t.native || h == 16 || h == 128 || (h == 32 && q8 && kv8) || (h == 64 && q8 && kv8 && msq == 1) ||
                (q.arch == Arch::gfx950 && h == 8 && q8 && kv8 && msq == 4) ||
                (q.arch == Arch::gfx942 && h == 8 && !q8 && !kv8 && msq == 2) ||
                (q.arch == Arch::gfx950 && !q8 && !kv8) ||
                (q.arch == Arch::gfx950 && q8 && kv8 && ((h == 32 && msq == 4) || h == 64 || h == 128)) || t.hk_mtp;

  // H8: packed rows per tile.
  const bool p64 = (q.arch == Arch::gfx950 && !q8 && !kv8 && h * msq >= 64 && h <= 64 && (h * msq < 128 || h == 48)) ||
                   (q.arch == Arch::gfx950 && q8 && kv8 && h == 32 && msq == 3);
  t.packed_qo_len_per_wg = p64 ? 64 : 128;

  // H9: qo splitting uses the unfolded per-kv-head count.
  const int packed = msq * q.num_heads_per_head_k;
  t.qo_splits = !(packed > 0 && packed <= t.packed_qo_len_per_wg);
  return t;
}

std::vector<int> supported_head_counts(KernelTraitsQuery q) {
  std::vector<int> heads;
  for (int nh = 8; nh <= 128; nh += 8) {
    q.num_heads_per_head_k = nh;
    q.num_heads_k = 1;
    if (aiter_kernel_traits(q).supported) heads.push_back(nh);
  }
  return heads;
}

int sizing_tiles_per_batch(Arch arch, DType q, DType kv, int heads, int max_seqlen_qo, bool experimental) {
  const bool fp8 = q == DType::fp8 && kv == DType::fp8;
  const bool bf16 = q == DType::bf16 && kv == DType::bf16;
  const bool g942 = arch == Arch::gfx942;
  const bool g950 = arch == Arch::gfx950;
  const int eq = max_seqlen_qo;
  const int packed = eq * heads;
  if ((g950 && bf16 && packed >= 64 && heads <= 64 && (packed < 128 || heads == 48)) ||
      (g950 && fp8 && heads == 32 && eq == 3))
    return 2 * heads > 64 ? eq : static_cast<int>(cdiv(packed, 64));
  if (heads == 16 || (g942 && heads == 128 && fp8) ||
      (g942 && (heads == 16 || heads == 32 || heads == 64) && packed == 128 && fp8 && experimental) ||
      (g950 && fp8 && ((heads == 32 && eq == 4) || heads == 64 || heads == 128)) ||
      ((g942 || g950) && heads == 64 && fp8 && eq == 1))
    return static_cast<int>(cdiv(packed, 128));
  if (g950 && bf16 && (packed >= 128 || heads > 64) && heads != 48)
    return 2 * heads > 128 ? eq : static_cast<int>(cdiv(packed, 128));
  if (arch == Arch::other && heads == 128) return eq;  // our own 128-head kernel: one tile per query token
  return static_cast<int>(cdiv(packed, 16));
}

}  // namespace mlasim::sim
