#pragma once
// Empties the L2 of a timed kernel's data before each timed repetition, and leaves it clean: it reads a buffer
// twice the L2 size, so the lines it brings in are clean and the dirty lines of earlier writes are written back
// during the flush, not during the timed kernel. Overwriting a buffer instead (as a memset does) leaves the whole
// L2 dirty, and the timed kernel then pays for those write-backs: on the H100 that made the fp8 decode of batch
// 128 x 4096 ~10 us slower, while the 2 ms streaming-read benchmark barely moved (docs/kernels.md, "Benchmark").
#include <cstddef>

#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

class L2Flush {
 public:
  L2Flush();  // sized from device 0's L2
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  // Enqueues the flush on `stream`.
  void run(hipStream_t stream) const;

 private:
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  int blocks_ = 0;
};

}  // namespace mlasim::kernels
