#pragma once
// What the lines left dirty in L2 before a stage 1 cost it (docs/step.md §6): as its first reads sweep the L2, the
// dirty lines they evict go back to HBM and take memory bandwidth from it. A stage 1 streaming on few CUs has
// bandwidth to spare and does not notice; one that streams at the memory's limit pays the write-back in full. On an
// H200 the unsplit 16-head attention of 128 x 2048 (128 SMs) took 0.25 us more per MB written before it, that of
// 64 x 4096 (64 SMs) 0.04 us, that of 16 x 4096 (16 SMs) nothing measurable
// (data/measurements/h200/l2_grid/h16_followers/).
//
// The write-back costs the memory l2_carry_us_per_mb per MB (the carry-over's measured rate, against b_hbm_tbps for
// reads) and happens while the stage 1 reads one L2's worth of bytes from memory (a pass that reads the work's KV
// again counts), in proportion to them. Over that window the memory curve's bandwidth is b_hbm / (1 + W_eff / L2),
// W_eff the dirty MB in read-MB; the stage 1 is played again with it, and its extra time, times the window's share
// of those bytes, is what the curve says. A stage 1 under the curve's knee keeps its time; one at the limit takes
// W_eff / b_hbm. A kernel class shows `<class>.writeback_exposure` of that (measured per GPU, 0 where not): the
// 16-head kernel streams as the curve says, the 128-head one hides most of it behind its math (docs/step.md §6).
// Where the class has a `writeback_share_floor`, a plan on that share of the CUs or fewer shows none of it and one
// on every CU all of it: the fp8 kernel's plans on 64 SMs hide the write-back in the bandwidth the idle SMs leave,
// those on 128 do not (data/measurements/h200/l2_grid/fp8_followers*).
//
//   const L2Writeback wb = l2_writeback_of(ctx.params, ctx.gpu);     // unknown where the carry-over is
//   double dirty = l2_dirty_before_mb(ops, wb);                      // what the ops before it left dirty
//   double us = l2_writeback_us(*e.plan, ctx.batch, ctx.gpu, ctx.params, dirty, wb);
#include <span>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/l2_prior_writes.h"
#include "mlasim/sim/plan.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::sim {

struct L2Writeback {
  double us_per_mb = 0;  // the memory's time per MB written back (l2_carry_us_per_mb)
  double cap_mb = 0;     // the most MB left dirty (l2_carry_cap_mb)
  double window_mb = 0;  // the GPU's L2: a write with more traffic after it is gone, and the stage 1's reads
                         // over which the dirty lines leave
  bool known() const { return us_per_mb > 0 && cap_mb > 0 && window_mb > 0; }
};

// From the carry-over's parameters and the GPU's L2; all zero (unknown) where either is missing.
L2Writeback l2_writeback_of(const CostParams& params, const Gpu& gpu);

// The MB that `ops` (oldest first, the last one just before the stage 1) leave dirty: each op, cut into
// kL2PriorWritesChunks chunks in time order, counts a chunk's writes while they and the traffic after them fit in
// the L2 (window_mb; older lines are gone), and at most cap_mb in all (the most dirty MB the carry-over probe found
// one kernel to leave). A caller may stop collecting ops once they touch more than window_mb.
double l2_dirty_before_mb(std::span<const OpBytes> ops, const L2Writeback& wb);

// The exposure of a class's plan on `active_clusters` of `num_cu` CUs: writeback_exposure, times the linear rise
// from writeback_share_floor (none) to every CU (all) where the class has a floor.
double writeback_exposure_at(const KernelClassParams& cls, int active_clusters, int num_cu);

// The stage 1's extra time (us) when `dirty_mb` are dirty in L2 as it starts; 0 when `wb` is unknown or nothing is
// dirty, or the class that runs has no measured exposure. Plays the plan's stage 1 once more with the reduced
// bandwidth.
double l2_writeback_us(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                       double dirty_mb, const L2Writeback& wb);
// The same where the caller has the plan's metrics with `params` already (an Evaluation's): one play, not two.
double l2_writeback_us(const Plan& plan, const DecodeBatch& batch, const Gpu& gpu, const CostParams& params,
                       const Metrics& clean, double dirty_mb, const L2Writeback& wb);

}  // namespace mlasim::sim
