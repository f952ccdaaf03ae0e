#pragma once
// Streaming-read microbenchmark: `active_sms` SMs/CUs, each running `wg_per_sm` workgroups, read a buffer once
// with wide loads. The saturation curve over active SMs is what the cost model's beta_cu and B_hbm describe.
#include <cstdint>
#include <vector>

namespace mlasim::kernels {

struct StreamReadPoint {
  int active_sms = 0;
  int wg_per_sm = 0;
  int64_t bytes = 0;
  double us = 0;    // median over the repetitions
  double tbps = 0;  // bytes / us
};

// One point per (active SMs, workgroups per SM) pair; L2 flushed before every repetition.
std::vector<StreamReadPoint> stream_read_sweep(const std::vector<int>& active_sms, const std::vector<int>& wg_per_sm,
                                               int64_t bytes_per_sm, int repetitions);

}  // namespace mlasim::kernels
