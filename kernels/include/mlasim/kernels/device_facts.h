#pragma once
// What a measurement row records about the GPU it ran on.
#include <optional>
#include <string>

namespace mlasim::kernels {

struct DeviceFacts {
  std::string name;                 // "NVIDIA H100 80GB HBM3"
  int multiprocessors = 0;          // SMs / CUs
  std::optional<int> sm_clock_mhz;  // the peak clocks the driver reports
  std::optional<int> mem_clock_mhz;
};

// Device 0; throws std::runtime_error when no GPU answers.
DeviceFacts device_facts();

}  // namespace mlasim::kernels
