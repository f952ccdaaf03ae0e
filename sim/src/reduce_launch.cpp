#include "mlasim/sim/reduce_launch.h"

#include <algorithm>

namespace mlasim::sim {
namespace {

// AITER rounds Wg up to a power of two and then onto the row-group counts its kernel is built for.
int clamp_row_groups(int wg) {
  int p = 1;
  while (p < wg) p *= 2;
  for (int allowed : {1, 2, 4, 8, 16, 64, 256})
    if (p <= allowed) return allowed;
  return 256;
}

}  // namespace

ReduceLaunch aiter_reduce_launch(int tiles, int heads, int num_cu, int max_seqlen_q) {
  ReduceLaunch r;
  r.tiles = std::max(tiles, 0);
  r.heads = std::max(heads, 1);
  const int hw = num_cu * 8;
  const int64_t wl = int64_t{r.tiles} * r.heads;
  // int(hw * 1.3f): the product is taken in single precision, as the kernel's host code does.
  const int64_t boosted = static_cast<int64_t>(static_cast<float>(hw) * 1.3f);
  if (wl > 0 && boosted > wl) {
    const int64_t wg = std::min<int64_t>((boosted + wl - 1) / wl, std::max(max_seqlen_q, 1));
    r.row_groups = clamp_row_groups(static_cast<int>(wg));
  }
  r.persistent = r.work_items() > int64_t{16} * num_cu;
  r.blocks = r.persistent ? 16 * num_cu : static_cast<int>(r.work_items());
  return r;
}

}  // namespace mlasim::sim
