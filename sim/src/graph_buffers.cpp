#include "mlasim/sim/graph_buffers.h"

#include <algorithm>
#include <numeric>

#include "mlasim/model/input_error.h"

namespace mlasim::sim {

int64_t GraphBuffer::element_bytes() const {
  if (dtype == "uint64") return 8;
  return 4;  // int32, fp32
}

int64_t GraphBuffer::bytes() const {
  return std::accumulate(shape.begin(), shape.end(), element_bytes(), [](int64_t a, int64_t d) { return a * d; });
}

int64_t GraphBuffers::total_bytes() const {
  int64_t total = 0;
  for (const GraphBuffer& b : buffers) total += b.bytes();
  return total;
}

int64_t plan_need(const Plan& plan, BufferNeed need) {
  switch (need) {
    case BufferNeed::none: return 0;
    case BufferNeed::work_lists_plus_one: return int64_t{plan.num_work_lists()} + 1;
    case BufferNeed::works: return plan.num_works();
    case BufferNeed::reduce_tiles_plus_one: return int64_t{plan.num_tiles()} + 1;
    case BufferNeed::reduce_tiles: return plan.num_tiles();
    case BufferNeed::partials: return plan.num_partials();
    case BufferNeed::partial_rows: {
      int64_t rows = 0;
      for (const WorkInfo& w : plan.works)
        if (w.is_partial()) rows = std::max<int64_t>(rows, int64_t{w.partial_qo_loc} + w.qo_rows());
      return rows;
    }
    case BufferNeed::kv_rows: {
      int64_t rows = 0;
      for (const WorkInfo& w : plan.works) rows = std::max<int64_t>(rows, w.kv_end);
      return rows;
    }
  }
  return 0;
}

void check_plan_fits(const Plan& plan, const GraphBuffers& buffers) {
  for (const GraphBuffer& b : buffers.buffers) {
    const int64_t need = plan_need(plan, b.need);
    if (need > b.capacity())
      throw InputError(b.name, "this plan needs " + std::to_string(need) + " rows, the graph's buffer holds " +
                                   std::to_string(b.capacity()) + " (sized for the largest batch given)");
  }
}

}  // namespace mlasim::sim
