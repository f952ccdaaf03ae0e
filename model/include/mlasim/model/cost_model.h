#pragma once
// The physics of MLA decode time (docs/model.md): per-work fixed cost, streaming at a bandwidth share,
// compute bound per dtype, output writes, reduce cost and launch latency.
#include <string>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gpu.h"

namespace mlasim {

// Every parameter of the cost model. Values come from a Gpu profile's `params` (fitted or assumed, with
// provenance) or, when absent, from the defaults documented in docs/model.md.
struct CostParams {
  double t_fix_us = 1.0;          // fixed part of one work (prologue, Q load, epilogue)
  double beta_cu_gbps = 50.0;     // streaming bandwidth one cluster reaches alone
  double b_hbm_tbps = 6.0;        // effective HBM bandwidth shared by all streaming clusters
  double matrix_efficiency = 0.5; // fraction of the dense matrix peak a work reaches when compute-bound
  double launch_us = 4.0;         // one kernel launch
  double reduce_block_us = 1.0;   // fixed cost of one reduce workgroup
  double reduce_launch_us = 2.0;  // launch of the reduce kernel
  double planner_us = 5.0;        // the metadata (planner) kernel
  double grid_block_us = 1.0;     // extra fixed cost per workgroup of a hardware-scheduled grid kernel
  int grid_occupancy = 2;         // workgroups resident per CU for grid kernels
};

// The parameters for `gpu`: its profile's params where present, else the defaults derived from its datasheet.
CostParams cost_params_for(const Gpu& gpu);

// The keys of CostParams as they appear in a profile's "params" (e.g. "t_fix_us"), in declaration order.
const std::vector<std::string>& cost_param_keys();
double get_cost_param(const CostParams& p, const std::string& key);
void set_cost_param(CostParams& p, const std::string& key, double value);

}  // namespace mlasim
