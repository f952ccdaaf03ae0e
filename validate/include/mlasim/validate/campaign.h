#pragma once
// A measurement campaign: workload ranges x policy specs, sampled into configurations that `mlasim validate`
// runs on the real kernels. Each configuration has a stable id (a hash of its workload and policy), so a rerun
// skips what an earlier run measured and rows of different runs can be joined.
//
//   {"id": "standard-v1", "gpu": "h100", "sampling": "latin-hypercube", "samples": 1100, "seed": 1,
//    "axes": {"batch": {"log_range": [1, 256]}, "context": {"log_range": [64, 131072]}, "heads": [16, 128], ...},
//    "policies": ["aiter-v1", "flashmla", ...], "max_kv_bytes": 2e9, "repetitions": 15, "warmup": 2}
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mlasim/sim/workload.h"

namespace mlasim::validate {

// One axis of the workload space: a list of values, or (for random and Latin-hypercube sampling) an integer
// range sampled uniformly in log space.
struct CampaignAxis {
  std::vector<int> values;
  std::optional<std::pair<int, int>> log_range;
  static CampaignAxis of(std::vector<int> v) { return {std::move(v), std::nullopt}; }
};

struct Campaign {
  enum class Sampling { grid, random, latin_hypercube, list };

  std::string id;
  std::string description;
  std::string gpu = "h100";  // the profile plans are made for (its CU count)
  Sampling sampling = Sampling::grid;
  int samples = 0;  // random, latin-hypercube: configurations drawn (before the KV-size filter)
  uint64_t seed = 1;
  // Axes of the workload (grid/random/LHS). `spread` is the sigma of lognormal request lengths around the context
  // (0: every request has the context); a positive spread makes a ragged batch.
  CampaignAxis batch = CampaignAxis::of({4}), context = CampaignAxis::of({4096}), heads = CampaignAxis::of({16}),
               qlen = CampaignAxis::of({1}), page_size = CampaignAxis::of({64}), clusters = CampaignAxis::of({0});
  std::vector<DType> kv_dtypes{DType::bf16};
  std::vector<double> spreads{0.0};
  std::vector<std::string> policies{"aiter-v1"};
  std::vector<sim::Workload> workloads;  // list sampling: the workloads, each run under every policy
  double max_kv_bytes = 4e9;  // configurations reading more KV than this are left out (GPU memory, host time)
  // Timing.
  int warmup = 2;
  int repetitions = 15;
  std::string decode = "auto";  // the stage-1 kernel: auto, portable or wgmma
};

struct CampaignConfig {
  std::string id;  // "c" + 16 hex digits of a hash of the canonical workload JSON and policy spec
  sim::Workload workload;
  std::string policy;
};

struct CampaignPlan {
  std::vector<CampaignConfig> configs;  // in run order
  int left_out_kv = 0;                  // configurations over max_kv_bytes
  int left_out_unplannable = 0;         // configurations the policy cannot plan (e.g. heads it does not support)
  // Plans our kernels cannot run as planned: heads per tile other than 16 and 128, or a grid plan on a cluster
  // subset (the hardware places a grid's workgroups on every SM).
  int left_out_unrunnable = 0;
  std::vector<std::string> left_out_reasons;  // one example message per distinct reason
};

// Throws InputError naming the field by its path ("axes.batch: ..."); `what` names the campaign in messages.
Campaign campaign_from_json(const nlohmann::json& j);
nlohmann::json campaign_to_json(const Campaign& c);
Campaign load_campaign(const std::string& path);

// The configurations the campaign runs, deduplicated by id; each planned once on the campaign's GPU to leave out
// those its policy cannot plan.
CampaignPlan expand_campaign(const Campaign& c);

// The stable id of a configuration.
std::string config_id(const sim::Workload& w, const std::string& policy_spec);

// Estimated device seconds for one configuration: inputs made (when `new_inputs`: the first configuration of its
// workload) and uploaded, then warm-up and timed repetitions of the predicted kernel, each after an L2 flush.
double estimated_device_seconds(const Campaign& c, const CampaignConfig& config, double predicted_kernel_us,
                                bool new_inputs);

}  // namespace mlasim::validate
