#pragma once
// Buffers a CUDA/HIP-graph-captured decode step allocates once, for the largest batch it will run, and that
// the planner rewrites in place every step (AITER's get_mla_metadata_info_v1 and the partial outputs
// mla_decode_fwd allocates). A plan that needs more of a buffer than was allocated writes past it, so
// check_plan_fits names the buffer instead.
#include <cstdint>
#include <string>
#include <vector>

#include "mlasim/sim/plan.h"

namespace mlasim::sim {

// What a buffer's first dimension must hold for a plan.
enum class BufferNeed {
  none,                 // a fixed size (work_metadata_ptrs)
  work_lists_plus_one,  // work_indptr: one entry per work list, plus one
  works,                // work_info rows
  reduce_tiles_plus_one,
  reduce_tiles,  // tiles the reduce lists (final-map rows)
  partials,      // partial-map entries (split fragments)
  partial_rows,  // rows of the fp32 partial outputs: every work's partial_qo_loc + its q rows
  kv_rows,       // kv_indices entries: the furthest kv_end of any work
};

struct GraphBuffer {
  std::string name;
  std::vector<int64_t> shape;  // the first dimension is what BufferNeed counts
  std::string dtype;           // int32, uint64, fp32
  BufferNeed need = BufferNeed::works;

  int64_t element_bytes() const;
  int64_t bytes() const;
  int64_t capacity() const { return shape.empty() ? 0 : shape.front(); }
};

struct GraphBuffers {
  std::string policy;
  std::vector<GraphBuffer> buffers;
  int64_t total_bytes() const;
};

// How much of the buffer `need` the plan uses.
int64_t plan_need(const Plan& plan, BufferNeed need);

// Throws InputError(buffer name, "needs N ..., the buffer holds M") for the first buffer the plan overruns.
void check_plan_fits(const Plan& plan, const GraphBuffers& buffers);

}  // namespace mlasim::sim
