#include "mlasim/gui/scenario.h"

#include <QFile>
#include <QSaveFile>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <set>

#include "mlasim/model/input_error.h"

namespace mlasim::gui {
namespace {

using nlohmann::json;

// Reads fields of one JSON object, naming each by its path ("workload.batch.count") in errors, and rejects keys
// it does not know, so a typo or a file of another kind is reported instead of silently ignored.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, std::set<std::string> known)
      : j_(j), path_(std::move(path)), known_(std::move(known)) {
    if (!j_.is_object()) throw InputError(where(), "must be a JSON object, got " + std::string(j_.type_name()));
    for (const auto& [key, value] : j_.items()) {
      if (known_.count(key)) continue;
      std::string allowed;
      for (const auto& k : known_) allowed += (allowed.empty() ? "" : ", ") + k;
      throw InputError(name(key), "is not a scenario field here; allowed: " + allowed);
    }
  }

  bool has(const std::string& key) const { return j_.contains(key); }
  const json& at(const std::string& key) const {
    if (!has(key)) throw InputError(name(key), "is missing");
    return j_.at(key);
  }
  std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::string text(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_string()) throw InputError(name(key), "must be a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  int integer(const std::string& key, int fallback, int min_value, int max_value) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number_integer()) throw InputError(name(key), "must be an integer, got " + v.dump());
    const int64_t x = v.get<int64_t>();
    if (x < min_value || x > max_value)
      throw InputError(name(key), "must be " + std::to_string(min_value) + ".." + std::to_string(max_value) +
                                      ", got " + std::to_string(x));
    return static_cast<int>(x);
  }
  double real(const std::string& key, double fallback, double min_value, double max_value) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) throw InputError(name(key), "must be a number, got " + v.dump());
    const double x = v.get<double>();
    if (!(x >= min_value && x <= max_value))
      throw InputError(name(key), "must be in [" + json(min_value).dump() + ", " + json(max_value).dump() +
                                      "], got " + v.dump());
    return x;
  }

 private:
  std::string where() const { return path_.empty() ? "scenario" : path_; }
  const json& j_;
  std::string path_;
  std::set<std::string> known_;
};

constexpr int kMaxRequests = 65536;
constexpr int kMaxContext = 1 << 30;

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
  const ObjectReader kind_reader(j, path, {"kind", "count", "context", "kv_lens", "distribution", "min_context",
                                           "max_context", "median_context", "sigma", "seed"});
  BatchSpec b;
  const std::string kind = kind_reader.text("kind", "uniform");
  if (kind == "uniform") {
    const ObjectReader r(j, path, {"kind", "count", "context"});
    b.kind = BatchSpec::Kind::uniform;
    b.count = r.integer("count", b.count, 1, kMaxRequests);
    b.context = r.integer("context", b.context, 1, kMaxContext);
  } else if (kind == "list") {
    const ObjectReader r(j, path, {"kind", "kv_lens"});
    b.kind = BatchSpec::Kind::list;
    const json& lens = r.at("kv_lens");
    if (!lens.is_array() || lens.empty() || lens.size() > static_cast<size_t>(kMaxRequests))
      throw InputError(r.name("kv_lens"), "must be a list of 1.." + std::to_string(kMaxRequests) + " KV lengths");
    for (size_t i = 0; i < lens.size(); ++i) {
      if (!lens[i].is_number_integer() || lens[i].get<int64_t>() < 1 || lens[i].get<int64_t>() > kMaxContext)
        throw InputError(r.name("kv_lens"), "entry " + std::to_string(i) + " must be an integer 1.." +
                                                std::to_string(kMaxContext) + ", got " + lens[i].dump());
      b.kv_lens.push_back(lens[i].get<int>());
    }
  } else if (kind == "random") {
    const ObjectReader r(j, path, {"kind", "count", "distribution", "min_context", "max_context", "median_context",
                                   "sigma", "seed"});
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
      throw InputError(r.name("max_context"), "must be >= min_context (" + std::to_string(b.min_context) +
                                                  "), got " + std::to_string(b.max_context));
    b.median_context = r.integer("median_context", b.median_context, 1, kMaxContext);
    b.sigma = r.real("sigma", b.sigma, 0.0, 10.0);
    b.seed = static_cast<uint64_t>(r.integer("seed", 1, 0, std::numeric_limits<int>::max()));
  } else {
    throw InputError(kind_reader.name("kind"), "must be uniform, list or random, got '" + kind + "'");
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
    case BatchSpec::Kind::list:
      j["kv_lens"] = b.kv_lens;
      break;
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

DType dtype_field(const ObjectReader& r, const std::string& key, DType fallback) {
  return r.has(key) ? parse_dtype(r.text(key, ""), r.name(key)) : fallback;
}

}  // namespace

std::vector<int> BatchSpec::lengths() const {
  switch (kind) {
    case Kind::uniform:
      return std::vector<int>(static_cast<size_t>(std::max(count, 0)), context);
    case Kind::list:
      return kv_lens;
    case Kind::random:
      break;
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

DecodeBatch Workload::make_batch() const {
  DecodeBatch b;
  b.kv_lens = batch.lengths();
  b.qo_lens.assign(b.kv_lens.size(), qlen);
  b.q_heads = heads;
  b.kv_heads = 1;
  b.q_dtype = q_dtype;
  b.kv_dtype = kv_dtype;
  b.page_size = page_size;
  b.kv_granularity = std::max(page_size, 16);
  b.causal = true;
  b.validate();
  return b;
}

json scenario_to_json(const Scenario& s) {
  json j;
  if (!s.name.empty()) j["name"] = s.name;
  if (!s.description.empty()) j["description"] = s.description;
  const Workload& w = s.workload;
  j["workload"] = {{"gpu", w.gpu},
                   {"batch", batch_to_json(w.batch)},
                   {"qlen", w.qlen},
                   {"heads", w.heads},
                   {"q_dtype", std::string(dtype_name(w.q_dtype))},
                   {"kv_dtype", std::string(dtype_name(w.kv_dtype))},
                   {"page_size", w.page_size},
                   {"clusters", w.clusters}};
  j["policies"] = {{"A", s.policies[0]}, {"B", s.policies[1]}};
  return j;
}

Scenario scenario_from_json(const json& j) {
  const ObjectReader top(j, "", {"name", "description", "workload", "policies"});
  Scenario s;
  s.name = top.text("name", "");
  s.description = top.text("description", "");
  if (!top.has("workload")) throw InputError("workload", "is missing; a scenario needs a workload and policies A, B");
  const ObjectReader w(top.at("workload"), "workload",
                       {"gpu", "batch", "qlen", "heads", "q_dtype", "kv_dtype", "page_size", "clusters"});
  s.workload.gpu = w.text("gpu", s.workload.gpu);
  if (s.workload.gpu.empty()) throw InputError("workload.gpu", "must name a GPU profile, e.g. mi355x");
  if (w.has("batch")) s.workload.batch = batch_from_json(w.at("batch"), "workload.batch");
  s.workload.qlen = w.integer("qlen", s.workload.qlen, 1, 1024);
  s.workload.heads = w.integer("heads", s.workload.heads, 1, 1024);
  s.workload.q_dtype = dtype_field(w, "q_dtype", s.workload.q_dtype);
  s.workload.kv_dtype = dtype_field(w, "kv_dtype", s.workload.kv_dtype);
  s.workload.page_size = w.integer("page_size", s.workload.page_size, 1, 1 << 16);
  s.workload.clusters = w.integer("clusters", s.workload.clusters, 0, 1 << 16);
  if (!top.has("policies")) throw InputError("policies", "is missing; give policy specs A and B");
  const ObjectReader p(top.at("policies"), "policies", {"A", "B"});
  s.policies[0] = p.text("A", "");
  s.policies[1] = p.text("B", "");
  for (int side = 0; side < 2; ++side)
    if (s.policies[side].empty()) throw InputError(p.name(side == 0 ? "A" : "B"), "must be a policy spec, e.g. aiter-v1");
  return s;
}

Scenario load_scenario(const std::string& path) {
  QFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::ReadOnly))
    throw InputError("scenario", path + ": cannot read (" + file.errorString().toStdString() + ")");
  const QByteArray bytes = file.readAll();
  json j;
  try {
    j = json::parse(bytes.constData(), bytes.constData() + bytes.size());
  } catch (const json::parse_error& e) {
    throw InputError("scenario", path + ": not valid JSON (" + e.what() + ")");
  }
  try {
    return scenario_from_json(j);
  } catch (const InputError& e) {
    throw InputError("scenario", path + ": " + e.what());
  }
}

void save_scenario(const Scenario& s, const std::string& path) {
  const std::string text = scenario_to_json(s).dump(2) + "\n";
  QSaveFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !file.commit())
    throw InputError("scenario", path + ": cannot write (" + file.errorString().toStdString() + ")");
}

}  // namespace mlasim::gui
