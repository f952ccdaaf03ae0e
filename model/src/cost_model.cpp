#include "mlasim/model/cost_model.h"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"

namespace mlasim {
namespace {

// The planner's own estimate of one work's fixed cost (aiter-v1-planner spec §12): OV x G = 16 granules of
// 16 tokens at page size 1, i.e. 256 KV tokens of 576 fp8 bytes.
constexpr double kPlannerFixedCostBytes = 256.0 * DecodeBatch::kQkHeadDim * 1.0;

// One entry per CostParams member, in declaration order, with its allowed range.
struct ParamSlot {
  const char* key;
  double CostParams::*real;
  int CostParams::*integer;
  double lo, hi;
  bool above_lo;  // strictly above lo (rates and bandwidths)
  const char* rule;
  bool of_kernel;  // a property of the kernels, not of the GPU's memory or launch path (is_kernel_param_key)
  bool zero_or_from_one = false;  // 0 switches the term off; otherwise at least 1 (a curve's exponent)
};

constexpr double kInf = std::numeric_limits<double>::infinity();

const ParamSlot kSlots[] = {
    {"t_fix_us", &CostParams::t_fix_us, nullptr, 0, kInf, false, ">= 0", true},
    {"beta_cu_gbps", &CostParams::beta_cu_gbps, nullptr, 0, kInf, true, "> 0", true},
    {"b_hbm_tbps", &CostParams::b_hbm_tbps, nullptr, 0, kInf, true, "> 0", false},
    {"matrix_efficiency", &CostParams::matrix_efficiency, nullptr, 0, 1, true, "in (0, 1]", true},
    {"launch_us", &CostParams::launch_us, nullptr, 0, kInf, false, ">= 0", false},
    {"reduce_block_us", &CostParams::reduce_block_us, nullptr, 0, kInf, false, ">= 0", true},
    {"reduce_launch_us", &CostParams::reduce_launch_us, nullptr, 0, kInf, false, ">= 0", false},
    {"planner_us", &CostParams::planner_us, nullptr, 0, kInf, false, ">= 0", false},
    {"grid_block_us", &CostParams::grid_block_us, nullptr, 0, kInf, false, ">= 0", true},
    {"grid_occupancy", nullptr, &CostParams::grid_occupancy, 1, 64, false, "an integer 1..64", false},
    {"bw_knee", &CostParams::bw_knee, nullptr, 0, 64, false, "0 (sharp) or in [1, 64]", false, true},
    {"stage_gap_us", &CostParams::stage_gap_us, nullptr, 0, kInf, false, ">= 0", true},
    {"second_kernel_us", &CostParams::second_kernel_us, nullptr, 0, kInf, false, ">= 0", true},
    {"reduce_beta_gbps", &CostParams::reduce_beta_gbps, nullptr, 0, kInf, false, ">= 0 (0: beta_cu_gbps)", true},
    {"reduce_item_us", &CostParams::reduce_item_us, nullptr, 0, kInf, false, ">= 0", true},
    {"reduce_blocks_per_cu", nullptr, &CostParams::reduce_blocks_per_cu, 0, 64, false,
     "an integer 0..64 (0: the reduce kernel's own rule)", true},
    {"reduce_wide_blocks_per_cu", nullptr, &CostParams::reduce_wide_blocks_per_cu, 0, 64, false,
     "an integer 0..64 (0: reduce_blocks_per_cu)", true},
    {"fold_reread_fraction", &CostParams::fold_reread_fraction, nullptr, 0, 1, false, "in [0, 1]", true},
    {"fold_l2_window", &CostParams::fold_l2_window, nullptr, 0, 16, false, "in [0, 16] L2 sizes (0: off)", true},
    {"persistent_cluster_us", &CostParams::persistent_cluster_us, nullptr, 0, kInf, false, ">= 0", true},
    {"gather_extra_read", &CostParams::gather_extra_read, nullptr, 0, 4, false, "in [0, 4]", true},
    {"compute_overlap_n", &CostParams::compute_overlap_n, nullptr, 0, 64, false, "0 (perfect overlap) or in [1, 64]",
     true, true},
    {"grid_stream_factor", &CostParams::grid_stream_factor, nullptr, 0, 4, true, "in (0, 4]", true},
    {"l2_carry_us_per_mb", &CostParams::l2_carry_us_per_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_carry_cap_mb", &CostParams::l2_carry_cap_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_carry_reread_evict", &CostParams::l2_carry_reread_evict, nullptr, 0, 16, false, "in [0, 16]", false},
    {"stream_kernel_us", &CostParams::stream_kernel_us, nullptr, 0, kInf, false, ">= 0", false},
    {"stream_kernel_tbps", &CostParams::stream_kernel_tbps, nullptr, 0, kInf, false, ">= 0 (0: not measured)", false},
    {"stream_write_tbps", &CostParams::stream_write_tbps, nullptr, 0, kInf, false, ">= 0 (0: stream_kernel_tbps)",
     false},
    {"events_overhead_us", &CostParams::events_overhead_us, nullptr, 0, kInf, false, ">= 0", false},
    {"events_kernel_overhead_us", &CostParams::events_kernel_overhead_us, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_prior_writes_us_per_mb", &CostParams::l2_prior_writes_us_per_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_prior_writes_rho_mb", &CostParams::l2_prior_writes_rho_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_prior_writes_gamma", &CostParams::l2_prior_writes_gamma, nullptr, 0, 16, false, "in [0, 16]", false},
    {"l2_prior_writes_max_us", &CostParams::l2_prior_writes_max_us, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_prior_writes_cap_mb", &CostParams::l2_prior_writes_cap_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_copy_prior_writes_us_per_mb_per_copy_mb", &CostParams::l2_copy_prior_writes_us_per_mb_per_copy_mb, nullptr, 0,
     kInf, false, ">= 0", false},
    {"l2_copy_prior_writes_rho_mb", &CostParams::l2_copy_prior_writes_rho_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"l2_copy_prior_writes_gamma", &CostParams::l2_copy_prior_writes_gamma, nullptr, 0, 16, false, "in [0, 16]", false},
    {"l2_copy_prior_writes_cap_mb", &CostParams::l2_copy_prior_writes_cap_mb, nullptr, 0, kInf, false, ">= 0", false},
    {"step_fuse_offset_us", &CostParams::step_fuse_offset_us, nullptr, -kInf, kInf, false, "a number of us", false},
};

// The per-class fields, with the ranges of a set value (NaN = not set is always allowed).
struct ClassSlot {
  const char* field;
  double KernelClassParams::*member;
  double lo, hi;
  bool above_lo;
  const char* rule;
  // A property of the kernel, carried to another GPU; false: a response of the target GPU's memory and L2 (a class's
  // knee, part of the memory curve, its write-back exposure and share floor, its prior-writes law), which stays it.
  bool of_kernel = true;
};

const ClassSlot kClassSlots[] = {
    {"t_fix_us", &KernelClassParams::t_fix_us, 0, kInf, false, ">= 0"},
    {"t_pass_us", &KernelClassParams::t_pass_us, 0, kInf, false, ">= 0"},
    {"beta_gbps", &KernelClassParams::beta_gbps, 0, kInf, true, "> 0"},
    {"matrix_efficiency", &KernelClassParams::matrix_efficiency, 0, 1, true, "in (0, 1]"},
    {"reread_fraction", &KernelClassParams::reread_fraction, 0, 1, false, "in [0, 1]"},
    {"grid_stream_factor", &KernelClassParams::grid_stream_factor, 0, 4, true, "in (0, 4]"},
    {"page_copy_us", &KernelClassParams::page_copy_us, 0, kInf, false, ">= 0"},
    {"bw_knee", &KernelClassParams::bw_knee, 1, 64, false, "in [1, 64]", false},
    {"writeback_exposure", &KernelClassParams::writeback_exposure, 0, 4, false, "in [0, 4]", false},
    {"writeback_share_floor", &KernelClassParams::writeback_share_floor, 0, 0.99, false, "in [0, 0.99]", false},
    {"prior_writes_us_per_mb_per_cluster", &KernelClassParams::prior_writes_us_per_mb_per_cluster, 0, kInf, false,
     ">= 0", false},
    {"prior_writes_rho_mb", &KernelClassParams::prior_writes_rho_mb, 0, kInf, false, ">= 0", false},
    {"prior_writes_gamma", &KernelClassParams::prior_writes_gamma, 0, 16, false, "in [0, 16]", false},
    {"prior_writes_cap_mb", &KernelClassParams::prior_writes_cap_mb, 0, kInf, false, ">= 0", false},
    {"policy_offset_carry", &KernelClassParams::policy_offset_carry, 0, 1, false, "in [0, 1]", false},
};

// A class key split into its class and field; nullopt when `key` has no '.'.
struct ClassKey {
  KernelClassId id;
  const ClassSlot* slot;
};

std::optional<ClassKey> class_key(const std::string& key) {
  const size_t dot = key.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const auto id = parse_kernel_class(std::string_view(key).substr(0, dot));
  if (!id) throw InputError(key, "unknown kernel class '" + key.substr(0, dot) + "'; known: " + kernel_class_names());
  const std::string field = key.substr(dot + 1);
  for (const ClassSlot& s : kClassSlots)
    if (field == s.field) return ClassKey{*id, &s};
  std::vector<std::string> known;
  for (const ClassSlot& s : kClassSlots) known.emplace_back(s.field);
  throw InputError(key, "unknown kernel class parameter '" + field + "'; known: " + join_names(known));
}

// Throws InputError(field, ...) for a set value outside the slot's range.
void check_class_value(const std::string& field, const ClassSlot& s, double v) {
  if (std::isnan(v)) return;
  if (!std::isfinite(v) || v > s.hi || (s.above_lo ? v <= s.lo : v < s.lo))
    throw InputError(field, fmt::format("must be {}, got {}", s.rule, v));
}

const ParamSlot& slot_for(const std::string& key) {
  for (const ParamSlot& s : kSlots)
    if (key == s.key) return s;
  std::vector<std::string> known;
  for (const ParamSlot& s : kSlots) known.emplace_back(s.key);
  throw InputError(key, "unknown cost parameter; known: " + join_names(known));
}

bool in_range(const ParamSlot& s, double v) {
  if (!std::isfinite(v) || v > s.hi || (s.above_lo ? v <= s.lo : v < s.lo)) return false;
  if (s.zero_or_from_one && v > 0 && v < 1) return false;
  return s.real || v == std::floor(v);
}

void check_range(const std::string& field, const ParamSlot& s, double v) {
  if (!in_range(s, v)) throw InputError(field, fmt::format("must be {}, got {}", s.rule, v));
}

double read(const CostParams& p, const ParamSlot& s) { return s.real ? p.*s.real : static_cast<double>(p.*s.integer); }

}  // namespace

double hbm_efficiency(const std::string& vendor) {
  // AMD: aiter #5456 reached 5.96 of MI355X's 8 TB/s (0.745); NVIDIA: FlashMLA reached 3.0 of H800's
  // 3.35 TB/s (0.90) and 2.83 on H100 (0.84). docs/model.md §1.
  return vendor == "nvidia" ? 0.85 : 0.75;
}

CostParams default_cost_params(const Gpu& gpu) {
  CostParams p;
  p.b_hbm_tbps = gpu.hbm_tbps * hbm_efficiency(gpu.vendor);
  // One cluster streams at most its even share of the device bandwidth: the per-CU and the device bound
  // meet when every cluster streams (so a plan on 1/4 of the CUs streams 4x slower, as ATOM #611 reports).
  p.beta_cu_gbps = p.b_hbm_tbps * 1000.0 / gpu.num_cu;
  p.t_fix_us = kPlannerFixedCostBytes / (p.beta_cu_gbps * 1e3);  // bytes / (bytes per us)
  return p;
}

KernelClassParams CostParams::resolved(KernelClassId id) const {
  KernelClassParams c = classes[static_cast<size_t>(id)];
  auto fill = [](double& v, double fallback) {
    if (std::isnan(v)) v = fallback;
  };
  if (const auto from = kernel_class(id).params_from) {
    const KernelClassParams wider = resolved(*from);
    for (const ClassSlot& s : kClassSlots) fill(c.*(s.member), wider.*(s.member));
    return c;
  }
  fill(c.t_fix_us, t_fix_us);
  fill(c.t_pass_us, 0.0);
  fill(c.beta_gbps, beta_cu_gbps);
  fill(c.matrix_efficiency, matrix_efficiency);
  fill(c.reread_fraction, 1.0);
  fill(c.grid_stream_factor, grid_stream_factor);
  fill(c.page_copy_us, 0.0);
  fill(c.bw_knee, bw_knee);
  fill(c.writeback_exposure, 0.0);
  fill(c.writeback_share_floor, 0.0);
  fill(c.prior_writes_us_per_mb_per_cluster, 0.0);
  fill(c.prior_writes_rho_mb, 0.0);
  fill(c.prior_writes_gamma, 0.0);
  fill(c.prior_writes_cap_mb, 0.0);
  fill(c.policy_offset_carry, 1.0);
  return c;
}

CostParams cost_params_for(const Gpu& gpu) {
  CostParams p = default_cost_params(gpu);
  for (const auto& [key, param] : gpu.params) {
    try {
      set_cost_param(p, key, param.value);
    } catch (const InputError& e) {
      throw InputError("gpu.params." + key, e.what());
    }
  }
  return p;
}

const std::vector<std::string>& global_cost_param_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const ParamSlot& s : kSlots) k.emplace_back(s.key);
    return k;
  }();
  return keys;
}

const std::vector<std::string>& cost_param_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = global_cost_param_keys();
    for (const KernelClass& c : kernel_classes())
      for (const ClassSlot& s : kClassSlots) k.push_back(std::string(c.name) + "." + s.field);
    return k;
  }();
  return keys;
}

bool is_kernel_param_key(const std::string& key) {
  if (const auto ck = class_key(key)) return ck->slot->of_kernel;
  return slot_for(key).of_kernel;
}

bool has_stream_kernel(const CostParams& params) { return params.stream_kernel_tbps > 0; }

double stream_write_tbps_of(const CostParams& params) {
  return params.stream_write_tbps > 0 ? params.stream_write_tbps : params.stream_kernel_tbps;
}

double stream_kernel_time_us(const CostParams& params, double bytes, double written) {
  if (!has_stream_kernel(params)) return bytes / (params.b_hbm_tbps * 1e6);
  return params.stream_kernel_us + (bytes - written) / (params.stream_kernel_tbps * 1e6) +
         written / (stream_write_tbps_of(params) * 1e6);
}

double get_cost_param(const CostParams& p, const std::string& key) {
  if (const auto ck = class_key(key)) return p.classes[static_cast<size_t>(ck->id)].*(ck->slot->member);
  return read(p, slot_for(key));
}

double effective_cost_param(const CostParams& p, const std::string& key) {
  if (const auto ck = class_key(key)) return p.resolved(ck->id).*(ck->slot->member);
  return read(p, slot_for(key));
}

void set_cost_param(CostParams& p, const std::string& key, double value) {
  if (const auto ck = class_key(key)) {
    check_class_value(key, *ck->slot, value);
    p.classes[static_cast<size_t>(ck->id)].*(ck->slot->member) = value;
    return;
  }
  const ParamSlot& s = slot_for(key);
  check_range(key, s, value);
  if (s.real)
    p.*s.real = value;
  else
    p.*s.integer = static_cast<int>(value);
}

void validate_cost_params(const CostParams& p) {
  for (const ParamSlot& s : kSlots)
    if (!in_range(s, read(p, s))) check_range(s.key, s, read(p, s));  // names the key only on failure
  for (const KernelClass& c : kernel_classes())
    for (const ClassSlot& s : kClassSlots) {
      check_class_value(std::string(c.name) + "." + s.field, s, p.classes[static_cast<size_t>(c.id)].*s.member);
    }
}

}  // namespace mlasim
