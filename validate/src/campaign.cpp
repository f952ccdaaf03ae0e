#include "mlasim/validate/campaign.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "mlasim/model/cost_model.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/kernel_traits.h"
#include "mlasim/sim/policy_spec.h"

namespace mlasim::validate {
namespace {

using nlohmann::json;

constexpr const char* kWhat = "campaign";

const char* sampling_name(Campaign::Sampling s) {
  switch (s) {
    case Campaign::Sampling::grid: return "grid";
    case Campaign::Sampling::random: return "random";
    case Campaign::Sampling::latin_hypercube: return "latin-hypercube";
    case Campaign::Sampling::list: return "list";
  }
  return "grid";
}

CampaignAxis axis_from_json(const json& j, const std::string& path, int min_value, int max_value) {
  CampaignAxis a;
  if (j.is_object()) {
    const JsonFields r(j, path, {"log_range"}, kWhat);
    const std::vector<int> range = r.integers("log_range", min_value, max_value, 2);
    if (range.size() != 2 || range[0] > range[1])
      throw InputError(r.name("log_range"), "must be [min, max] with min <= max");
    a.log_range = std::make_pair(range[0], range[1]);
    return a;
  }
  if (!j.is_array() || j.empty() || j.size() > 4096)
    throw InputError(path, "must be a list of 1..4096 values or {\"log_range\": [min, max]}");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number_integer() || j[i].get<int64_t>() < min_value || j[i].get<int64_t>() > max_value)
      throw InputError(path, "entry " + std::to_string(i) + " must be an integer " + std::to_string(min_value) + ".." +
                                 std::to_string(max_value) + ", got " + j[i].dump());
    a.values.push_back(j[i].get<int>());
  }
  return a;
}

json axis_to_json(const CampaignAxis& a) {
  if (a.log_range) return {{"log_range", {a.log_range->first, a.log_range->second}}};
  return a.values;
}

// 64-bit FNV-1a: stable across platforms and runs, unlike std::hash.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Uniform doubles in [0, 1) from the raw bits (std's distributions differ between standard libraries).
class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  size_t index(size_t n) { return std::min(n - 1, static_cast<size_t>(unit() * static_cast<double>(n))); }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[index(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// The value of `axis` at the fraction u in [0, 1) of its range.
int axis_value(const CampaignAxis& axis, double u) {
  if (axis.log_range) {
    const double lo = std::log(axis.log_range->first), hi = std::log(axis.log_range->second + 1.0);
    return std::clamp(static_cast<int>(std::floor(std::exp(lo + u * (hi - lo)))), axis.log_range->first,
                      axis.log_range->second);
  }
  return axis
      .values[std::min(axis.values.size() - 1, static_cast<size_t>(u * static_cast<double>(axis.values.size())))];
}

struct Point {
  int batch, context, heads, qlen, page_size, clusters;
  DType kv;
  double spread;
};

sim::Workload workload_at(const Campaign& c, const Point& p) {
  sim::Workload w;
  w.gpu = c.gpu;
  if (p.spread > 0) {
    w.batch.kind = sim::BatchSpec::Kind::random;
    w.batch.distribution = sim::BatchSpec::Distribution::lognormal;
    w.batch.count = p.batch;
    w.batch.median_context = p.context;
    w.batch.sigma = p.spread;
    w.batch.min_context = std::max(1, p.context / 32);
    w.batch.max_context = std::min(1 << 20, p.context * 32);
    // The lengths' seed follows from the point, so the same point always means the same batch.
    w.batch.seed = fnv1a(fmt::format("{}:{}:{}:{}", c.seed, p.batch, p.context, p.spread)) & 0x7fffffff;
  } else {
    w.batch = sim::BatchSpec::uniform(p.batch, p.context);
  }
  w.qlen = p.qlen;
  w.heads = p.heads;
  w.q_dtype = DType::bf16;  // the kernels take bf16 queries
  w.kv_dtype = p.kv;
  w.page_size = p.page_size;
  w.clusters = p.clusters;
  return w;
}

std::vector<Point> grid_points(const Campaign& c) {
  for (const CampaignAxis* a : {&c.batch, &c.context, &c.heads, &c.qlen, &c.page_size, &c.clusters})
    if (a->log_range) throw InputError("axes", "grid sampling needs a list of values on every axis, not a log_range");
  std::vector<Point> out;
  for (int b : c.batch.values)
    for (int ctx : c.context.values)
      for (int h : c.heads.values)
        for (int q : c.qlen.values)
          for (int pg : c.page_size.values)
            for (int cl : c.clusters.values)
              for (DType kv : c.kv_dtypes)
                for (double s : c.spreads) out.push_back({b, ctx, h, q, pg, cl, kv, s});
  return out;
}

std::vector<Point> sampled_points(const Campaign& c) {
  Draw draw(c.seed);
  const size_t n = static_cast<size_t>(c.samples);
  // Latin hypercube: every axis is cut into n strata and each stratum is used once; random: independent draws.
  const bool lhs = c.sampling == Campaign::Sampling::latin_hypercube;
  constexpr int kAxes = 8;
  std::vector<std::vector<size_t>> strata(kAxes, std::vector<size_t>(n));
  for (auto& perm : strata) {
    std::iota(perm.begin(), perm.end(), size_t{0});
    draw.shuffle(perm);
  }
  const auto u = [&](int axis, size_t i) {
    return lhs ? (static_cast<double>(strata[static_cast<size_t>(axis)][i]) + draw.unit()) / static_cast<double>(n)
               : draw.unit();
  };
  const auto pick = [](const auto& list, double f) {
    return list[std::min(list.size() - 1, static_cast<size_t>(f * static_cast<double>(list.size())))];
  };
  std::vector<Point> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    out.push_back({axis_value(c.batch, u(0, i)), axis_value(c.context, u(1, i)), axis_value(c.heads, u(2, i)),
                   axis_value(c.qlen, u(3, i)), axis_value(c.page_size, u(4, i)), axis_value(c.clusters, u(5, i)),
                   pick(c.kv_dtypes, u(6, i)), pick(c.spreads, u(7, i))});
  return out;
}

}  // namespace

std::string config_id(const sim::Workload& w, const std::string& policy_spec) {
  const std::string canonical = sim::workload_to_json(w).dump() + "|" + sim::parse_policy_spec(policy_spec).to_string();
  return fmt::format("c{:016x}", fnv1a(canonical));
}

Campaign campaign_from_json(const json& j) {
  const JsonFields r(j, "",
                     {"id", "description", "gpu", "sampling", "samples", "seed", "axes", "policies", "workloads",
                      "max_kv_bytes", "warmup", "repetitions", "decode"},
                     kWhat);
  Campaign c;
  c.id = r.text("id", "");
  if (c.id.empty()) throw InputError("id", "must name the campaign, e.g. standard-v1");
  c.description = r.text("description", "");
  c.gpu = r.text("gpu", c.gpu);
  const std::string sampling = r.text("sampling", "grid");
  if (sampling == "grid") {
    c.sampling = Campaign::Sampling::grid;
  } else if (sampling == "random") {
    c.sampling = Campaign::Sampling::random;
  } else if (sampling == "latin-hypercube") {
    c.sampling = Campaign::Sampling::latin_hypercube;
  } else if (sampling == "list") {
    c.sampling = Campaign::Sampling::list;
  } else {
    throw InputError("sampling", "must be grid, random, latin-hypercube or list, got '" + sampling + "'");
  }
  const bool sampled = c.sampling == Campaign::Sampling::random || c.sampling == Campaign::Sampling::latin_hypercube;
  c.samples = r.integer("samples", 0, sampled ? 1 : 0, 1000000);
  if (sampled && !r.has("samples")) throw InputError("samples", "is needed for " + sampling + " sampling");
  c.seed = static_cast<uint64_t>(r.integer("seed", 1, 0, std::numeric_limits<int>::max()));
  if (r.has("axes")) {
    const JsonFields a(r.at("axes"), "axes",
                       {"batch", "context", "heads", "qlen", "page_size", "clusters", "kv_dtype", "spread"}, kWhat);
    if (a.has("batch")) c.batch = axis_from_json(a.at("batch"), a.name("batch"), 1, 65536);
    if (a.has("context")) c.context = axis_from_json(a.at("context"), a.name("context"), 1, 1 << 24);
    if (a.has("heads")) c.heads = axis_from_json(a.at("heads"), a.name("heads"), 1, 1024);
    if (a.has("qlen")) c.qlen = axis_from_json(a.at("qlen"), a.name("qlen"), 1, 1024);
    if (a.has("page_size")) c.page_size = axis_from_json(a.at("page_size"), a.name("page_size"), 1, 1 << 16);
    if (a.has("clusters")) c.clusters = axis_from_json(a.at("clusters"), a.name("clusters"), 0, 1 << 16);
    if (a.has("kv_dtype")) {
      const json& list = a.at("kv_dtype");
      if (!list.is_array() || list.empty())
        throw InputError("axes.kv_dtype", "must be a list such as [\"bf16\", \"fp8\"]");
      c.kv_dtypes.clear();
      for (const json& d : list) {
        if (!d.is_string()) throw InputError("axes.kv_dtype", "must be a list of dtype names, got " + d.dump());
        c.kv_dtypes.push_back(parse_dtype(d.get<std::string>(), "axes.kv_dtype"));
      }
    }
    if (a.has("spread")) {
      const json& list = a.at("spread");
      if (!list.is_array() || list.empty()) throw InputError("axes.spread", "must be a list of sigmas >= 0");
      c.spreads.clear();
      for (const json& s : list) {
        if (!s.is_number() || s.get<double>() < 0 || s.get<double>() > 4)
          throw InputError("axes.spread", "must be a list of sigmas in [0, 4], got " + s.dump());
        c.spreads.push_back(s.get<double>());
      }
    }
  }
  if (!r.has("policies")) throw InputError("policies", "is missing; give a list of policy specs");
  const json& policies = r.at("policies");
  if (!policies.is_array() || policies.empty())
    throw InputError("policies", "must be a non-empty list of policy specs");
  c.policies.clear();
  for (const json& p : policies) {
    if (!p.is_string() || p.get<std::string>().empty())
      throw InputError("policies", "must be a list of policy specs, got " + p.dump());
    c.policies.push_back(p.get<std::string>());
  }
  if (r.has("workloads")) {
    const json& list = r.at("workloads");
    if (!list.is_array()) throw InputError("workloads", "must be a list of workload objects");
    for (size_t i = 0; i < list.size(); ++i) {
      sim::Workload w = sim::workload_from_json(list[i], "workloads[" + std::to_string(i) + "]");
      if (!list[i].contains("gpu")) w.gpu = c.gpu;
      // A measurement row records one top-k for the batch; refuse before anything is measured.
      if (!w.topk_lens.empty())
        throw InputError("workloads[" + std::to_string(i) + "].topk_lens",
                         "a campaign's rows record one top-k per workload; give topk without per-request lengths");
      if (w.scopes.on())
        throw InputError("workloads[" + std::to_string(i) + "].dsv4",
                         "a campaign's rows record dense and top-k workloads; two-scope (DeepSeek-V4) batches are "
                         "predicted, not measured");
      c.workloads.push_back(std::move(w));
    }
  }
  if (c.sampling == Campaign::Sampling::list && c.workloads.empty())
    throw InputError("workloads", "list sampling needs a non-empty list of workloads");
  c.max_kv_bytes = r.real("max_kv_bytes", c.max_kv_bytes, 1, 1e13);
  c.warmup = r.integer("warmup", c.warmup, 0, 1000);
  c.repetitions = r.integer("repetitions", c.repetitions, 1, 10000);
  c.decode = r.text("decode", c.decode);
  if (c.decode != "auto" && c.decode != "portable" && c.decode != "wgmma")
    throw InputError("decode", "must be auto, portable or wgmma, got '" + c.decode + "'");
  return c;
}

json campaign_to_json(const Campaign& c) {
  json j = {{"id", c.id},
            {"gpu", c.gpu},
            {"sampling", sampling_name(c.sampling)},
            {"seed", c.seed},
            {"policies", c.policies},
            {"max_kv_bytes", c.max_kv_bytes},
            {"warmup", c.warmup},
            {"repetitions", c.repetitions},
            {"decode", c.decode}};
  if (!c.description.empty()) j["description"] = c.description;
  if (c.samples) j["samples"] = c.samples;
  json kv = json::array();
  for (DType d : c.kv_dtypes) kv.push_back(std::string(dtype_name(d)));
  j["axes"] = {{"batch", axis_to_json(c.batch)},
               {"context", axis_to_json(c.context)},
               {"heads", axis_to_json(c.heads)},
               {"qlen", axis_to_json(c.qlen)},
               {"page_size", axis_to_json(c.page_size)},
               {"clusters", axis_to_json(c.clusters)},
               {"kv_dtype", kv},
               {"spread", c.spreads}};
  if (!c.workloads.empty()) {
    json list = json::array();
    for (const sim::Workload& w : c.workloads) list.push_back(sim::workload_to_json(w));
    j["workloads"] = list;
  }
  return j;
}

Campaign load_campaign(const std::string& path) {
  return parse_json_file(path, "campaign", [](const json& j) { return campaign_from_json(j); });
}

// KV rows a configuration makes and reads: the whole context, or for a sparse batch the rows gathered for its
// query tokens (FlashMLA's full top-k, the most any convention reads).
static int64_t kv_rows_read(const DecodeBatch& batch) {
  return batch.is_sparse() ? gathered_batch(batch, GatheredRows::full_topk).total_kv_tokens() : batch.total_kv_tokens();
}

CampaignPlan expand_campaign(const Campaign& c) {
  std::vector<sim::Workload> workloads;
  if (c.sampling == Campaign::Sampling::list) {
    workloads = c.workloads;
  } else {
    const std::vector<Point> points = c.sampling == Campaign::Sampling::grid ? grid_points(c) : sampled_points(c);
    for (const Point& p : points) workloads.push_back(workload_at(c, p));
  }
  for (const std::string& spec : c.policies) sim::make_policy(spec);  // a bad spec is the campaign's error
  // So is a GPU profile that does not load or holds a parameter out of range: left to each workload, it would leave
  // every configuration out as one the policy cannot plan, and a run would measure nothing without an error.
  std::set<std::string> profiles;
  for (const sim::Workload& w : workloads)
    if (profiles.insert(w.gpu).second) cost_params_for(*sim::gpu_profile(w.gpu));
  CampaignPlan plan;
  std::set<std::string> seen;
  std::map<std::string, bool> reasons;
  for (const sim::Workload& w : workloads) {
    sim::WorkloadContext ctx;
    try {
      ctx = sim::resolve(w);
    } catch (const InputError& e) {
      plan.left_out_unplannable += static_cast<int>(c.policies.size());
      if (!reasons.count(e.field())) plan.left_out_reasons.push_back(e.what());
      reasons[e.field()] = true;
      continue;
    }
    const double kv_bytes =
        static_cast<double>(kv_rows_read(ctx.batch)) * DecodeBatch::kQkHeadDim * dtype_bytes(w.kv_dtype);
    for (const std::string& spec : c.policies) {
      if (kv_bytes > c.max_kv_bytes) {
        ++plan.left_out_kv;
        continue;
      }
      CampaignConfig config{config_id(w, spec), w, sim::parse_policy_spec(spec).to_string()};
      if (!seen.insert(config.id).second) continue;
      try {
        const sim::Plan p = sim::make_policy(spec)->plan({ctx.batch, ctx.gpu, ctx.clusters});
        // A grid kernel is placed by the hardware on every SM: a cluster subset applies to persistent plans only.
        const bool grid_on_subset = p.kernel == sim::KernelKind::grid && w.clusters > 0;
        if (!sim::our_kernels_run_heads(p.derived.num_heads_eff) || grid_on_subset) {
          ++plan.left_out_unrunnable;
          continue;
        }
      } catch (const InputError& e) {
        ++plan.left_out_unplannable;
        const std::string key = sim::parse_policy_spec(spec).name + ":" + e.field();
        if (!reasons.count(key)) plan.left_out_reasons.push_back(config.policy + ": " + e.what());
        reasons[key] = true;
        continue;
      }
      plan.configs.push_back(std::move(config));
    }
  }
  return plan;
}

double estimated_device_seconds(const Campaign& c, const CampaignConfig& config, double predicted_kernel_us,
                                bool new_inputs) {
  const DecodeBatch batch = config.workload.make_batch();
  const double kv_bytes =
      static_cast<double>(kv_rows_read(batch)) * DecodeBatch::kQkHeadDim * dtype_bytes(config.workload.kv_dtype);
  // Rough rates, to be compared with a run's measured wall time: inputs made on the host at ~2 GB/s (all cores)
  // and uploaded at ~10 GB/s; each repetition pays the L2 read flush and two launches (~60 us) besides the
  // kernel; a configuration has ~20 ms of set-up (plan, allocation, reference check).
  constexpr double kHostBytesPerSecond = 2e9, kUploadBytesPerSecond = 10e9, kRepetitionOverheadUs = 60,
                   kSetupSeconds = 0.02;
  return kSetupSeconds + (new_inputs ? kv_bytes / kHostBytesPerSecond : 0.0) + kv_bytes / kUploadBytesPerSecond +
         (c.warmup + c.repetitions) * (predicted_kernel_us + kRepetitionOverheadUs) * 1e-6;
}

}  // namespace mlasim::validate
