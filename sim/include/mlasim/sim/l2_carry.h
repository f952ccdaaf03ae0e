#pragma once
// L2 carry-over (docs/step.md §6): the bytes an attention run leaves written (dirty) in L2 when it ends, which the
// next kernel that streams from HBM writes back while it runs, and so takes longer. A split plan's partial outputs
// are such bytes: on an H100 the GEMM after a 4-split attention at batch 16 ran 7 us longer than after the unsplit
// one. The probe behind the numbers (scripts/l2_carry_probe.py) measured an HBM-bound kernel after W MB of fresh
// writes taking us_per_mb * min(W, cap_mb) longer, and less when the written bytes were read back after more than
// cap_mb of them (as a reduce reads the partials): each MB that read misses in L2 displaces reread_evict MB of the
// dirty ones.
//
//   const L2Carry c = l2_carry_of(ctx.params);                 // unknown (all zero) for a profile without them
//   const L2Dirty d = l2_dirty(*e.plan, e.prediction->timeline, batch, c);
//   double extra_us = l2_carry_us(d, c);                       // the next kernel's extra time
#include <span>
#include <vector>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

struct L2Carry {
  double us_per_mb = 0;     // the next kernel's extra time per MB left dirty (MB = 1e6 bytes)
  double cap_mb = 0;        // the most MB one kernel leaves dirty
  double reread_evict = 0;  // dirty MB displaced per MB that a read of written bytes misses in L2
  bool known() const { return us_per_mb > 0 && cap_mb > 0; }
};

// The cost parameters l2_carry_us_per_mb, l2_carry_cap_mb and l2_carry_reread_evict (a profile's params); all zero
// (unknown) when either of the first two is 0.
L2Carry l2_carry_of(const CostParams& params);

// Where the bytes an attention run writes are when it ends, in MB.
struct L2Dirty {
  double stage1_written_mb = 0;  // stage 1's outputs and partials
  double stage1_dirty_mb = 0;    // of them, still in L2 when stage 1 ends: written with less than cap_mb of
                                 // traffic (KV read, outputs written) after them, at most cap_mb
  double reread_missed_mb = 0;   // partials the reduce reads back that stage 1 had already pushed out of L2
  double reduce_written_mb = 0;  // the reduce's outputs
  double end_dirty_mb = 0;       // dirty when the run ends, at most cap_mb: what the next kernel writes back
};

// One work as stage 1 played it: its KV streams evenly over [stream_us, end_us], its output lands at end_us.
struct WorkWindow {
  int work = -1;  // index into plan.works
  double stream_us = 0, end_us = 0;
};

// Per window (parallel to `windows`): 1 where the work's output is still in L2 when stage 1 ends, written with
// less than `cap_mb` of traffic (KV streamed, outputs written) after it; 0 where it is pushed out. Windows of no
// work of `plan` move nothing and get 0.
void l2_resident_outputs(const Plan& plan, const DecodeBatch& batch, std::span<const WorkWindow> windows, double cap_mb,
                         std::vector<char>& resident);

// The dirty bytes of `plan` as the simulator played it (`timeline`): each work's output lands when its box ends,
// its KV streams evenly over the box's streaming part. All zero when `carry` is unknown.
L2Dirty l2_dirty(const Plan& plan, const Timeline& timeline, const DecodeBatch& batch, const L2Carry& carry);

inline double l2_carry_us(const L2Dirty& d, const L2Carry& carry) { return carry.us_per_mb * d.end_dirty_mb; }

}  // namespace mlasim::sim
