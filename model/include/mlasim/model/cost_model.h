#pragma once
// The physics of MLA decode time (docs/model.md): per-work fixed cost, streaming at a bandwidth share,
// compute bound per dtype, output writes, reduce cost and launch latency.
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/kernel_class.h"

namespace mlasim {

// What one kernel class costs on one GPU. A value left NaN ("not set") falls back to the value in effect of the
// class it is cut from (KernelClass::params_from), where it has one; else to the global parameter of the same
// meaning (t_fix_us, beta_cu_gbps, matrix_efficiency, grid_stream_factor, bw_knee); t_pass_us falls back to 0,
// reread_fraction and policy_offset_carry to 1, page_copy_us, writeback_exposure, writeback_share_floor and the
// prior_writes_* to 0. Profile keys: "<class name>.<field>", e.g. "wgmma-fp8.t_pass_us".
struct KernelClassParams {
  double t_fix_us = kUnset;               // fixed part of one work (prologue, Q staging, epilogue)
  double t_pass_us = kUnset;              // fixed part of each pass over the KV (Q staging and merge of a pass)
  double beta_gbps = kUnset;              // bandwidth one cluster of this kernel streams at when alone
  double matrix_efficiency = kUnset;      // fraction of the dense matrix peak the kernel's math reaches
  double reread_fraction = kUnset;        // share of a work's KV bytes read again from memory on each extra pass
  double grid_stream_factor = kUnset;     // how much slower its grid (split-KV) kernel streams and computes
  double page_copy_us = kUnset;           // time one page copy adds to a work, not hidden by its streaming (classes
                                          // that copy page by page: kernel_class.h page_copies)
  double bw_knee = kUnset;                // sharpness of the memory curve its stage 1 streams under: how many loads a
                                          // kernel keeps in flight decides how sharply its offered load saturates HBM
  double writeback_exposure = kUnset;     // how much of the memory curve's answer to the L2 write-back before it (what
                                          // the ops before left dirty, sim/l2_writeback.h) its stage 1 shows; measured
                                          // per GPU by a probe, 0 (none) where not
  double writeback_share_floor = kUnset;  // the share of the CUs a plan streams on (active clusters / CUs) at or
                                          // below which its stage 1 hides that write-back in the memory's spare
                                          // bandwidth; the exposure rises linearly from it to the full value on
                                          // every CU. 0: the full exposure at any share
  // The class's own law of what the ops before its stage 1 wrote, and read after writing, into L2
  // (model/l2_prior_writes.h), where an unsplit plan of it slows by that in proportion to the clusters it runs on:
  // the cost per MB written per active cluster, and the law's rho, gamma and cap (no saturation). 0 (per cluster):
  // the GPU's global law (l2_prior_writes_*) stands for the class.
  double prior_writes_us_per_mb_per_cluster = kUnset;
  double prior_writes_rho_mb = kUnset;
  double prior_writes_gamma = kUnset;
  double prior_writes_cap_mb = kUnset;
  // How much of a step's measured attention beyond the model's time for the plan that ran a policy edit of
  // `mlasim step` carries to the new plan (docs/step.md §3): 1 in proportion to the two plans' times (the model's
  // ratio applied to the measured attention), 0 none (the new plan's own predicted time). A class whose plan that ran
  // is predicted short in isolation where the new one is not passes that error on with the ratio.
  double policy_offset_carry = kUnset;
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
};

// Every parameter of the cost model. Values come from a Gpu profile's `params` (fitted or assumed, with
// provenance) or, when absent, from the datasheet-derived defaults of cost_params_for() (docs/model.md §1).
// The member initializers below are only what a default-constructed CostParams holds (an MI355X-like
// device); use cost_params_for(gpu) for a real profile.
struct CostParams {
  double t_fix_us = 6.3;           // fixed part of one work (prologue, Q load, epilogue)
  double beta_cu_gbps = 23.4;      // streaming bandwidth one cluster (workgroup) reaches alone, GB/s
  double b_hbm_tbps = 6.0;         // effective HBM bandwidth shared by all streaming clusters, TB/s
  double matrix_efficiency = 0.3;  // fraction of the dense matrix peak a work reaches when compute-bound
  double launch_us = 3.0;          // one kernel launch (the stage-1 kernel)
  double reduce_block_us = 1.0;    // fixed cost of one reduce workgroup
  double reduce_launch_us = 3.0;   // launch of the reduce kernel (only when the plan has partials)
  double planner_us = 5.0;         // the metadata (planner) kernel of persistent plans
  double grid_block_us = 1.0;      // extra fixed cost per workgroup of a hardware-scheduled grid kernel
  int grid_occupancy = 1;          // workgroups resident per CU for grid kernels
  // The saturation curve of the memory system (measured by the streaming-read sweep): k streaming clusters that
  // would each move beta alone together move D / (1 + (D / B)^n)^(1/n) with D = k beta and B = b_hbm_tbps, i.e.
  // each gets beta / (1 + (k beta / B)^n)^(1/n). n = bw_knee; 0 stands for the sharp limit min(beta, B / k).
  double bw_knee = 0;
  double stage_gap_us = 0;  // time after stage 1's end inside kernel_us (before the reduce, with second_kernel_us)
  // What each kernel after stage 1 (the reduce, a two-scope run's merge) adds to kernel_us besides its own work: its
  // launch gap and the drain of the kernel before it, which a one-kernel plan's stage_gap_us does not hold. Fitted
  // with the kernel model; our timelines measure it apart (mlasim report --timeline); 0: none.
  double second_kernel_us = 0;
  double reduce_beta_gbps = 0;  // bandwidth one reduce workgroup streams at alone (0: beta_cu_gbps)
  double reduce_item_us = 0;    // fixed cost of each (tile, row group, head) item a reduce workgroup merges
  // Workgroups of the mla_reduce_v1-rule reduce (AITER's, ours) one CU holds at once; 0 takes AITER's launch
  // bounds, 8 (Triton's stage 2 keeps its 16). Measured by a timeline where our reduce runs: its 128-thread
  // workgroups (tiles of fewer than 16 partials), and its 512-thread form where a tile has 16 or more (0: as the
  // first).
  int reduce_blocks_per_cu = 0;
  int reduce_wide_blocks_per_cu = 0;
  // Head folding (R virtual batches per request) makes every head group read the request's KV. A work whose
  // tokens a sibling group read shortly before it (share s of its read) finds them in the L2 but for this share,
  // and reads s * fold_reread_fraction + (1 - s) of its KV from memory.
  double fold_reread_fraction = 1;
  // How recent that sibling read must be, as the bytes the device streams meanwhile in units of the GPU's L2
  // (sim/src/sibling_reads.h; a read that much later hits half the time). 0: the simulator does not look at its
  // timeline and takes s = (R - 1) / R for every work, as if the groups of a request ran side by side.
  double fold_l2_window = 0;
  double persistent_cluster_us = 0;  // prologue of a persistent cluster before its first work (its work list)
  // KV gathered row by row (page size 1: sparse top-k rows, or a one-token page table) against pages read in
  // runs: each gathered byte costs 1 + this many streamed ones (0: gathers stream like pages).
  double gather_extra_read = 0;
  // How a work's streaming and its math overlap: a streaming part that moves its bytes in m and needs c of math
  // lasts (m^n + c^n)^(1/n) with n = compute_overlap_n (both limits pull at once near the balance point, where
  // neither hides the other completely); 0 stands for the perfect overlap max(m, c).
  double compute_overlap_n = 0;
  // The grid (split-KV) kernels are other kernels than the persistent ones of their class, with another loop: their
  // works stream and compute this many times slower alone (1: as fast). The memory curve's shared limit is the same.
  // The fallback of the per-class value.
  double grid_stream_factor = 1;
  // L2 carry-over (sim/l2_carry.h): the next HBM-bound kernel's extra time per MB an attention run leaves dirty in
  // L2, the most MB left dirty, and the dirty MB displaced per MB a read-back (the reduce) misses. 0: not measured
  // on this GPU, and no carry-over is predicted.
  double l2_carry_us_per_mb = 0;
  double l2_carry_cap_mb = 0;
  double l2_carry_reread_evict = 0;
  // A standalone HBM-streaming kernel that reads R and writes W bytes (the step what-if's fused kernel given by its
  // bytes) takes stream_kernel_us + R / stream_kernel_tbps + W / stream_write_tbps: its grid's ramp and drain, then
  // the bandwidths one kernel reaches (measured by the L2 probe's read and fill kernels; writes land in L2 first).
  // stream_kernel_tbps 0: not measured, and such a kernel takes (R + W) / b_hbm_tbps; stream_write_tbps 0: writes
  // go at stream_kernel_tbps.
  double stream_kernel_us = 0;
  double stream_kernel_tbps = 0;
  double stream_write_tbps = 0;
  // What the campaigns' event timing adds to the kernels' device time (scripts/events_vs_trace_probe.py): the
  // event interval of a one-kernel plan over its kernel's time in a trace, and what a plan with a reduce adds to
  // that (the reduce's launch gap less the empty event pair the one-kernel interval already holds). kernel_us is
  // fitted mostly to event intervals; a trace books the kernels alone and the gaps apart (the step what-if,
  // docs/step.md §3). 0: not measured, and the event interval stands for the device time.
  double events_overhead_us = 0;
  double events_kernel_overhead_us = 0;
  // What the ops before an attention wrote into L2, and read after writing, costs its stage 1 (model/l2_prior_writes.h,
  // the grid probe of docs/step.md §4): per MB written, the cost at nothing touched after it, the MB of reads after
  // it that multiply that cost by e, the weight of writes after it against reads, the most it costs in all, and the
  // MB touched after a write past which it was written back in time. 0 (us_per_mb, rho_mb, max_us or cap_mb): not
  // measured on this GPU.
  double l2_prior_writes_us_per_mb = 0;
  double l2_prior_writes_rho_mb = 0;
  double l2_prior_writes_gamma = 0;
  double l2_prior_writes_max_us = 0;
  double l2_prior_writes_cap_mb = 0;
  // The same law for a device-to-device copy after the ops (model/l2_prior_writes.h, the copy-batch probe of
  // docs/step.md §3): its cost per MB written per MB the copy reads (a larger copy evicts more of the dirty lines),
  // rho, gamma and cap as above; no saturation. 0 (us_per_mb_per_copy_mb, rho_mb or cap_mb): not measured.
  double l2_copy_prior_writes_us_per_mb_per_copy_mb = 0;
  double l2_copy_prior_writes_rho_mb = 0;
  double l2_copy_prior_writes_gamma = 0;
  double l2_copy_prior_writes_cap_mb = 0;
  // What a fused kernel given by its bytes, with the ops' bytes known, saves per run beyond its stream cost and the L2
  // laws: the median of the step validation runs' fuse errors per site, predicted less measured (the step what-if,
  // docs/step.md §3; scripts/edit_error_fit.py). Taken off each fused run's time. 0: not measured.
  double step_fuse_offset_us = 0;
  std::array<KernelClassParams, kKernelClassCount> classes{};

  // The class's parameters with the fallbacks filled in (its wider class's, then the global ones).
  KernelClassParams resolved(KernelClassId id) const;
};

// The parameters for `gpu`: its profile's params where present, else the defaults derived from its datasheet:
//   b_hbm_tbps   = hbm_tbps x hbm_efficiency(vendor)   (0.75 AMD, 0.85 NVIDIA: achieved fractions in public runs)
//   beta_cu_gbps = b_hbm_tbps x 1000 / num_cu          (one cluster streams at most its even share)
//   t_fix_us     = 256 tokens x 576 B / beta_cu         (the planner's own fixed cost: OV x G fp8 tokens)
//   the rest     = the member initializers above (assumed).
// Throws InputError("gpu.params.<key>", ...) for a profile value out of range.
CostParams cost_params_for(const Gpu& gpu);

// The datasheet-derived defaults alone (ignoring the profile's params).
CostParams default_cost_params(const Gpu& gpu);

// The fraction of the datasheet HBM peak taken as the effective shared bandwidth for `vendor`.
double hbm_efficiency(const std::string& vendor);

// The keys of CostParams as they appear in a profile's "params" (e.g. "t_fix_us"), in declaration order, then the
// per-class keys ("portable-bf16.t_fix_us", ...) class by class.
const std::vector<std::string>& cost_param_keys();
// Reads or writes one parameter by key; unknown keys and out-of-range values throw InputError naming the key.
double get_cost_param(const CostParams& p, const std::string& key);
void set_cost_param(CostParams& p, const std::string& key, double value);
// The value in effect: get_cost_param, except that an unset class value reads as its fallback.
double effective_cost_param(const CostParams& p, const std::string& key);

// The global keys only (no class keys), in declaration order.
const std::vector<std::string>& global_cost_param_keys();
// True for a parameter of the kernels (every class key but a class's memory-curve knee and write-back exposure; the
// fixed costs, compute
// efficiency, per-cluster rate, reduce costs, stage gap, L2 re-read share, gather cost, overlap and grid factor),
// which carries to another GPU of the same architecture; false for the GPU's own memory curve (a class's knee and
// write-back exposure included) and launch path. Throws InputError for an unknown key.
bool is_kernel_param_key(const std::string& key);

// The time (us) of a standalone kernel that moves `bytes` through HBM, `written` of them writes (the rest reads):
// stream_kernel_us + the reads at stream_kernel_tbps + the writes at stream_write_tbps where the GPU's profile
// measured them, else all bytes at b_hbm_tbps.
double stream_kernel_time_us(const CostParams& params, double bytes, double written = 0);
// Whether `params` carry a measured stream kernel (stream_kernel_tbps > 0).
bool has_stream_kernel(const CostParams& params);
// The bandwidth a stream kernel writes at: stream_write_tbps, or stream_kernel_tbps where that is 0.
double stream_write_tbps_of(const CostParams& params);

// Throws InputError naming the first parameter out of its range (times >= 0, bandwidths and efficiency > 0,
// matrix_efficiency <= 1, grid_occupancy 1..64, reduce_blocks_per_cu and reduce_wide_blocks_per_cu 0..64, bw_knee and
// compute_overlap_n 0 or 1..64, a class's bw_knee 1..64, writeback_exposure 0..4, writeback_share_floor
// 0..0.99, prior_writes_gamma 0..16 and the other prior_writes_* >= 0, reread_fraction 0..1, grid_stream_factor in (0,
// 4]; unset class values are fine).
void validate_cost_params(const CostParams& p);

}  // namespace mlasim
