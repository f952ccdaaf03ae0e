#pragma once
// Integer arithmetic the planners share: they all count whole blocks, pages, tiles and waves.
#include <cstdint>

namespace mlasim::sim {

// Ceiling division for a >= 0 and b > 0, (a + b - 1) / b as AITER, FlashMLA and FlashInfer write it.
// In 64 bits so that token totals of large batches never overflow.
constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace mlasim::sim
