#pragma once
// The physics of MLA decode time (docs/model.md): per-work fixed cost, streaming at a bandwidth share,
// compute bound per dtype, output writes, reduce cost and launch latency.
#include <string>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"

namespace mlasim {

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

// The keys of CostParams as they appear in a profile's "params" (e.g. "t_fix_us"), in declaration order.
const std::vector<std::string>& cost_param_keys();
// Reads or writes one parameter by key; unknown keys and out-of-range values throw InputError naming the key.
double get_cost_param(const CostParams& p, const std::string& key);
void set_cost_param(CostParams& p, const std::string& key, double value);

// Throws InputError naming the first parameter out of its range (times >= 0, bandwidths and efficiency > 0,
// matrix_efficiency <= 1, grid_occupancy 1..64).
void validate_cost_params(const CostParams& p);

}  // namespace mlasim
