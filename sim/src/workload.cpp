#include "mlasim/sim/workload.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"

namespace mlasim::sim {
namespace {

using nlohmann::json;

constexpr int kMaxRequests = 65536;
constexpr int kMaxContext = 1 << 30;
constexpr const char* kWhat = "scenario";  // unknown keys: "is not a scenario field here"

const char* kind_name(BatchSpec::Kind k) {
  switch (k) {
    case BatchSpec::Kind::uniform: return "uniform";
    case BatchSpec::Kind::list: return "list";
    case BatchSpec::Kind::random: return "random";
  }
  return "uniform";
}

const char* distribution_name(BatchSpec::Distribution d) {
  return d == BatchSpec::Distribution::lognormal ? "lognormal" : "uniform";
}

BatchSpec batch_from_json(const json& j, const std::string& path) {
  const JsonFields any_kind(j, path,
                            {"kind", "count", "context", "kv_lens", "distribution", "min_context", "max_context",
                             "median_context", "sigma", "seed"},
                            kWhat);
  BatchSpec b;
  const std::string kind = any_kind.text("kind", "uniform");
  if (kind == "uniform") {
    const JsonFields r(j, path, {"kind", "count", "context"}, kWhat);
    b.kind = BatchSpec::Kind::uniform;
    b.count = r.integer("count", b.count, 1, kMaxRequests);
    b.context = r.integer("context", b.context, 1, kMaxContext);
  } else if (kind == "list") {
    const JsonFields r(j, path, {"kind", "kv_lens"}, kWhat);
    b.kind = BatchSpec::Kind::list;
    b.kv_lens = r.integers("kv_lens", 1, kMaxContext, kMaxRequests);
  } else if (kind == "random") {
    const JsonFields r(
        j, path, {"kind", "count", "distribution", "min_context", "max_context", "median_context", "sigma", "seed"},
        kWhat);
    b.kind = BatchSpec::Kind::random;
    b.count = r.integer("count", b.count, 1, kMaxRequests);
    const std::string dist = r.text("distribution", "uniform");
    if (dist == "uniform") {
      b.distribution = BatchSpec::Distribution::uniform;
    } else if (dist == "lognormal") {
      b.distribution = BatchSpec::Distribution::lognormal;
    } else {
      throw InputError(r.name("distribution"), "must be uniform or lognormal, got '" + dist + "'");
    }
    b.min_context = r.integer("min_context", b.min_context, 1, kMaxContext);
    b.max_context = r.integer("max_context", b.max_context, 1, kMaxContext);
    if (b.max_context < b.min_context)
      throw InputError(r.name("max_context"), "must be >= min_context (" + std::to_string(b.min_context) + "), got " +
                                                  std::to_string(b.max_context));
    // The lognormal's shape means nothing to a uniform draw; taking it silently would also lose it on writing.
    if (b.distribution == BatchSpec::Distribution::uniform)
      for (const char* key : {"median_context", "sigma"})
        if (r.has(key))
          throw InputError(r.name(key), "applies to distribution lognormal only; this batch's distribution is uniform");
    b.median_context = r.integer("median_context", b.median_context, 1, kMaxContext);
    b.sigma = r.real("sigma", b.sigma, 0.0, 10.0);
    b.seed = static_cast<uint64_t>(r.integer("seed", 1, 0, std::numeric_limits<int>::max()));
  } else {
    throw InputError(any_kind.name("kind"), "must be uniform, list or random, got '" + kind + "'");
  }
  return b;
}

json batch_to_json(const BatchSpec& b) {
  json j;
  j["kind"] = kind_name(b.kind);
  switch (b.kind) {
    case BatchSpec::Kind::uniform:
      j["count"] = b.count;
      j["context"] = b.context;
      break;
    case BatchSpec::Kind::list: j["kv_lens"] = b.kv_lens; break;
    case BatchSpec::Kind::random:
      j["count"] = b.count;
      j["distribution"] = distribution_name(b.distribution);
      j["min_context"] = b.min_context;
      j["max_context"] = b.max_context;
      if (b.distribution == BatchSpec::Distribution::lognormal) {
        j["median_context"] = b.median_context;
        j["sigma"] = b.sigma;
      }
      j["seed"] = b.seed;
      break;
  }
  return j;
}

DType dtype_field(const JsonFields& r, const std::string& key, DType fallback) {
  return r.has(key) ? parse_dtype(r.text(key, ""), r.name(key)) : fallback;
}

}  // namespace

BatchSpec BatchSpec::uniform(int count, int context) {
  BatchSpec b;
  b.kind = Kind::uniform;
  b.count = count;
  b.context = context;
  return b;
}

BatchSpec BatchSpec::list(std::vector<int> lens) {
  BatchSpec b;
  b.kind = Kind::list;
  b.kv_lens = std::move(lens);
  return b;
}

std::vector<int> BatchSpec::lengths() const {
  switch (kind) {
    case Kind::uniform: return std::vector<int>(static_cast<size_t>(std::max(count, 0)), context);
    case Kind::list: return kv_lens;
    case Kind::random: break;
  }
  // mt19937_64's output sequence is fixed by the standard, but std's distributions are not; mapping the raw
  // bits ourselves keeps a scenario's seed meaning the same lengths with every standard library.
  std::mt19937_64 engine(seed);
  const auto unit = [&engine] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };  // [0, 1)
  std::vector<int> out;
  out.reserve(static_cast<size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    double len = 0;
    if (distribution == Distribution::uniform) {
      len = min_context + std::floor(unit() * (static_cast<double>(max_context) - min_context + 1));
    } else {
      // Box-Muller: one standard normal from two uniforms (1 - u keeps the log argument in (0, 1]).
      const double z = std::sqrt(-2.0 * std::log(1.0 - unit())) * std::cos(2.0 * std::numbers::pi * unit());
      len = std::round(median_context * std::exp(sigma * z));
    }
    out.push_back(static_cast<int>(std::clamp(len, double(min_context), double(max_context))));
  }
  return out;
}

int Workload::granularity() const { return kv_granularity.value_or(std::max(page_size, 16)); }

DecodeBatch Workload::make_batch() const {
  DecodeBatch b;
  b.kv_lens = batch.lengths();
  if (qo_lens.empty()) {
    b.qo_lens.assign(b.kv_lens.size(), qlen);
  } else if (qo_lens.size() != b.kv_lens.size()) {
    throw InputError("qo_lens", "has " + std::to_string(qo_lens.size()) + " entries for " +
                                    std::to_string(b.kv_lens.size()) + " requests");
  } else {
    b.qo_lens = qo_lens;
  }
  b.q_heads = heads;
  b.kv_heads = kv_heads;
  b.q_dtype = q_dtype;
  b.kv_dtype = kv_dtype;
  b.page_size = page_size;
  b.kv_granularity = granularity();
  b.causal = causal;
  b.topk = topk;
  b.topk_lens = topk_lens;
  b.scopes = scopes;
  b.validate();
  return b;
}

namespace {

json scopes_to_json(const TwoScopes& s) {
  return {{"window", s.window},
          {"compress_ratio", s.compress_ratio},
          {"extra_topk", s.extra_topk},
          {"run", std::string(scope_run_name(s.run))}};
}

// A layer kind names its preset; an object starts from no scopes, so each of its fields is stated or 0.
TwoScopes scopes_from_json(const json& j, const std::string& path) {
  if (j.is_string()) {
    try {
      return TwoScopes::preset(j.get<std::string>());
    } catch (const InputError& e) {
      throw InputError(path, e.message());
    }
  }
  if (!j.is_object())
    throw InputError(path,
                     "must be a layer kind (csa, hca, swa) or an object {window, compress_ratio, extra_topk, run}");
  const JsonFields r(j, path, {"window", "compress_ratio", "extra_topk", "run"}, kWhat);
  TwoScopes s;
  s.window = r.integer("window", 0, 1, TwoScopes::kMaxWindow);
  s.compress_ratio = r.integer("compress_ratio", 0, 0, TwoScopes::kMaxCompressRatio);
  s.extra_topk = r.integer("extra_topk", 0, 0, DecodeBatch::kMaxTopk);
  if (r.has("run")) s.run = parse_scope_run(r.text("run", "one-pass"), r.name("run"));
  if (!r.has("window")) throw InputError(r.name("window"), "is missing: two scopes need a sliding window (rows >= 1)");
  try {
    s.validate();
  } catch (const InputError& e) {
    throw InputError(r.name(e.field()), e.message());
  }
  return s;
}

}  // namespace

json workload_to_json(const Workload& w) {
  json j = {{"gpu", w.gpu},
            {"batch", batch_to_json(w.batch)},
            {"qlen", w.qlen},
            {"heads", w.heads},
            {"q_dtype", std::string(dtype_name(w.q_dtype))},
            {"kv_dtype", std::string(dtype_name(w.kv_dtype))},
            {"page_size", w.page_size},
            {"clusters", w.clusters}};
  // Fields most workloads leave at their defaults are written only when set, so files stay short.
  if (!w.qo_lens.empty()) j["qo_lens"] = w.qo_lens;
  if (w.kv_heads != 1) j["kv_heads"] = w.kv_heads;
  if (w.kv_granularity) j["kv_granularity"] = *w.kv_granularity;
  if (!w.causal) j["causal"] = false;
  if (w.topk > 0) j["topk"] = w.topk;
  if (!w.topk_lens.empty()) j["topk_lens"] = w.topk_lens;
  if (w.scopes.on()) j["dsv4"] = scopes_to_json(w.scopes);
  return j;
}

Workload workload_from_json(const json& j, const std::string& path) {
  const JsonFields r(j, path,
                     {"gpu", "batch", "qlen", "qo_lens", "heads", "kv_heads", "q_dtype", "kv_dtype", "page_size",
                      "kv_granularity", "causal", "clusters", "topk", "topk_lens", "dsv4"},
                     kWhat);
  Workload w;
  w.gpu = r.text("gpu", w.gpu);
  if (w.gpu.empty()) throw InputError(r.name("gpu"), "must name a GPU profile, e.g. mi355x");
  if (r.has("batch")) w.batch = batch_from_json(r.at("batch"), r.name("batch"));
  w.qlen = r.integer("qlen", w.qlen, 1, 1024);
  if (r.has("qo_lens")) w.qo_lens = r.integers("qo_lens", 1, 1024, kMaxRequests);
  w.heads = r.integer("heads", w.heads, 1, 1024);
  w.kv_heads = r.integer("kv_heads", w.kv_heads, 1, 1024);
  w.q_dtype = dtype_field(r, "q_dtype", w.q_dtype);
  w.kv_dtype = dtype_field(r, "kv_dtype", w.kv_dtype);
  w.page_size = r.integer("page_size", w.page_size, 1, 1 << 16);
  if (r.has("kv_granularity")) w.kv_granularity = r.integer("kv_granularity", 16, 1, 1 << 16);
  w.causal = r.boolean("causal", w.causal);
  w.clusters = r.integer("clusters", w.clusters, 0, 1 << 16);
  w.topk = r.integer("topk", w.topk, 0, DecodeBatch::kMaxTopk);
  if (r.has("topk_lens")) w.topk_lens = r.integers("topk_lens", 1, DecodeBatch::kMaxTopk, kMaxRequests);
  if (r.has("dsv4")) w.scopes = scopes_from_json(r.at("dsv4"), r.name("dsv4"));
  return w;
}

std::string context_label(const std::vector<int>& kv_lens) {
  if (kv_lens.empty()) return "ragged";
  for (int len : kv_lens)
    if (len != kv_lens.front()) return "ragged";
  return std::to_string(kv_lens.front());
}

std::string workload_label(const Workload& w) {
  const std::vector<int> lens = w.batch.lengths();
  return "b" + std::to_string(lens.size()) + "x" + context_label(lens) + " h" + std::to_string(w.heads) + " q" +
         std::to_string(w.qlen) + " " + std::string(dtype_name(w.kv_dtype)) + " p" + std::to_string(w.page_size) +
         " c" + std::to_string(w.clusters);
}

}  // namespace mlasim::sim
