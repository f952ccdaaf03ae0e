#include "mlasim/kernels/reduce_launch.h"

#include <algorithm>

namespace mlasim::kernels {

ReduceLaunch reduce_launch_shape(int num_tiles, int heads, int max_seqlen_q, int num_cu) {
  ReduceLaunch r;
  const int hw = static_cast<int>(static_cast<float>(num_cu * 8) * 1.3f);
  const int wl = num_tiles * heads;
  if (wl > 0 && hw > wl) {
    int wg = std::min((hw + wl - 1) / wl, std::max(max_seqlen_q, 1));
    int pow2 = 1;
    while (pow2 < wg) pow2 *= 2;
    // The kernel is instantiated for 1, 2, 4, 8, 16, 64 and 256 row groups only.
    for (int allowed : {1, 2, 4, 8, 16, 64, 256})
      if (allowed >= pow2) {
        r.row_groups = allowed;
        break;
      }
  }
  const long items = static_cast<long>(heads) * r.row_groups * num_tiles;
  r.persistent = items > 16L * num_cu;
  r.blocks = r.persistent ? 16 * num_cu : static_cast<int>(items);
  return r;
}

}  // namespace mlasim::kernels
