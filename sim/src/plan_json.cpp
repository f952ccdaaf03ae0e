#include "mlasim/sim/plan_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"

namespace mlasim::sim {
namespace {

using nlohmann::json;

json entry(int32_t v) { return v == kUnwritten ? json(nullptr) : json(v); }

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw InputError(where + key, "is missing");
  return j.at(key);
}

// A JSON integer as T, or InputError. nlohmann's get<int>() converts whatever number it finds: a float outside
// int's range is undefined behaviour, an integer outside it wraps (found by fuzz/plan_cases_fuzz).
template <typename T>
T checked_integer(const json& v, const std::string& name) {
  const bool fits = v.is_number_unsigned() ? std::in_range<T>(v.get<uint64_t>())
                                           : v.is_number_integer() && std::in_range<T>(v.get<int64_t>());
  if (!fits)
    throw InputError(name, "must be an integer in " + std::to_string(std::numeric_limits<T>::min()) + ".." +
                               std::to_string(std::numeric_limits<T>::max()) + ", got " + v.dump());
  return static_cast<T>(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>());
}

template <typename T>
T get(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return checked_integer<T>(v, where + key);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw InputError(where + key, "has the wrong type (" + std::string(v.type_name()) + ")");
  }
}

template <typename T>
T get_or(const json& j, const char* key, T fallback, const std::string& where) {
  return j.contains(key) ? get<T>(j, key, where) : fallback;
}

int32_t read_entry(const json& v, const std::string& name) {
  if (v.is_null()) return kUnwritten;
  if (!v.is_number_integer()) throw InputError(name, "entries must be integers or null");
  return checked_integer<int32_t>(v, name);
}

std::vector<int32_t> int_list(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_array()) throw InputError(where + key, "must be a list of integers");
  std::vector<int32_t> out;
  out.reserve(v.size());
  for (const auto& x : v) out.push_back(read_entry(x, where + key));
  return out;
}

}  // namespace

json plan_to_json(const Plan& p) {
  json out;
  const auto& d = p.derived;
  out["derived"] = {{"num_batches_eff", d.num_batches_eff},
                    {"num_heads_eff", d.num_heads_eff},
                    {"num_clusters", d.num_clusters},
                    {"num_splits", d.num_splits},
                    {"qk_batch_ratio", d.qk_batch_ratio},
                    {"fixed_over_head_num_blocks", d.fixed_over_head_num_blocks},
                    {"tail_done_threshold", d.tail_done_threshold},
                    {"uni_seqlen_qo_param", d.uni_seqlen_qo_param}};
  const auto& m = p.model;
  out["model"] = {{"sum_blocks", m.sum_blocks},
                  {"payload_blocks", m.payload_blocks},
                  {"packed_qo_len_per_wg", m.packed_qo_len_per_wg},
                  {"qo_splits", m.qo_splits},
                  {"tail_done_events", m.tail_done_events}};
  const auto& b = p.buffers;
  out["buffer_sizes"] = {
      {"work_metadata_ptrs", b.work_metadata_ptrs},       {"work_indptr", b.work_indptr},
      {"work_info_set", {b.work_info_rows, 8}},           {"reduce_indptr", b.reduce_indptr},
      {"reduce_final_map", {b.reduce_final_map_rows, 2}}, {"reduce_partial_map", b.reduce_partial_map}};
  json wi = json::array();
  for (int32_t v : p.work_indptr) wi.push_back(entry(v));
  json works = json::array();
  for (const WorkInfo& w : p.works)
    works.push_back({w.batch_idx, w.partial_qo_loc, w.qo_start, w.qo_end, w.kv_start, w.kv_end, w.kv_offset, w.pad});
  json final_map = json::array();
  for (const auto& r : p.reduce_final_map) {
    final_map.push_back(entry(r[0]));
    final_map.push_back(entry(r[1]));
  }
  out["outputs"] = {{"work_indptr", std::move(wi)},
                    {"num_works", p.num_works()},
                    {"work_info_set", std::move(works)},
                    {"reduce_indptr", p.reduce_indptr},
                    {"reduce_final_map", std::move(final_map)},
                    {"num_partials", p.num_partials()},
                    {"reduce_partial_map", p.reduce_partial_map}};
  // A sparse plan's requests are query tokens over gathered rows; dense plans leave the key out.
  if (p.gathered != GatheredRows::none) out["gathered_rows"] = std::string(gathered_rows_name(p.gathered));
  return out;
}

Plan plan_from_json(const json& j) {
  if (!j.is_object()) throw InputError("plan", "must be a JSON object");
  const json& o = j.contains("outputs") ? j.at("outputs") : j;
  const std::string w = j.contains("outputs") ? "outputs." : "";
  Plan p;
  p.work_indptr = int_list(o, "work_indptr", w);
  if (p.work_indptr.size() < 2 || p.work_indptr[0] != 0)
    throw InputError(w + "work_indptr", "must have >= 2 entries and start at 0");
  int nc = 0;
  for (size_t c = 1; c < p.work_indptr.size() && p.work_indptr[c] != kUnwritten; ++c) {
    if (p.work_indptr[c] < p.work_indptr[c - 1]) throw InputError(w + "work_indptr", "must not decrease");
    nc = static_cast<int>(c);
  }
  const json& rows = field(o, o.contains("work_info_set") ? "work_info_set" : "work_info", w);
  if (!rows.is_array()) throw InputError(w + "work_info_set", "must be a list of 8-integer rows");
  const int32_t nworks = p.work_indptr[static_cast<size_t>(nc)];
  if (rows.size() < static_cast<size_t>(nworks))
    throw InputError(w + "work_info_set",
                     "has " + std::to_string(rows.size()) + " rows but work_indptr needs " + std::to_string(nworks));
  for (int32_t i = 0; i < nworks; ++i) {
    const json& r = rows[static_cast<size_t>(i)];
    if (!r.is_array() || r.size() != 8)
      throw InputError(w + "work_info_set", "row " + std::to_string(i) + " must hold 8 integers");
    int32_t f[8];
    for (int k = 0; k < 8; ++k) f[k] = read_entry(r[static_cast<size_t>(k)], w + "work_info_set");
    p.works.push_back(WorkInfo{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
  }
  p.reduce_indptr = int_list(o, "reduce_indptr", w);
  const auto flat = int_list(o, "reduce_final_map", w);
  if (flat.size() % 2) throw InputError(w + "reduce_final_map", "must hold (qo_start, qo_end) pairs");
  for (size_t i = 0; i + 1 < flat.size(); i += 2) p.reduce_final_map.push_back({flat[i], flat[i + 1]});
  p.reduce_partial_map = int_list(o, "reduce_partial_map", w);
  const int32_t nparts = p.reduce_indptr.empty() ? 0 : p.reduce_indptr.back();
  if (nparts < 0 || static_cast<size_t>(nparts) > p.reduce_partial_map.size())
    throw InputError(w + "reduce_partial_map", "is shorter than reduce_indptr's total");
  p.reduce_partial_map.resize(static_cast<size_t>(nparts));

  p.derived.num_clusters = nc;
  if (j.contains("derived")) {
    const json& d = j["derived"];
    p.derived.num_batches_eff = get_or<int>(d, "num_batches_eff", 0, "derived.");
    p.derived.num_heads_eff = get_or<int>(d, "num_heads_eff", 16, "derived.");
    p.derived.num_splits = get_or<int>(d, "num_splits", nc, "derived.");
    p.derived.qk_batch_ratio = get_or<int>(d, "qk_batch_ratio", 1, "derived.");
    p.derived.fixed_over_head_num_blocks = get_or<int>(d, "fixed_over_head_num_blocks", 16, "derived.");
    p.derived.tail_done_threshold = get_or<int>(d, "tail_done_threshold", 1, "derived.");
    p.derived.uni_seqlen_qo_param = get_or<int>(d, "uni_seqlen_qo_param", -1, "derived.");
  } else {
    p.derived.num_splits = nc;
  }
  if (p.derived.qk_batch_ratio < 1) throw InputError("derived.qk_batch_ratio", "must be >= 1");
  int max_batch = -1;
  for (const auto& wk : p.works) max_batch = std::max(max_batch, wk.batch_idx);
  if (p.derived.num_batches_eff <= max_batch) p.derived.num_batches_eff = max_batch + 1;
  p.num_requests = static_cast<int>(cdiv(p.derived.num_batches_eff, p.derived.qk_batch_ratio));
  p.num_heads = p.derived.num_heads_eff * p.derived.qk_batch_ratio;
  int tiles = 0;
  for (size_t t = 0; t + 1 < p.reduce_indptr.size(); ++t)
    if (t < p.reduce_final_map.size()) ++tiles;
  p.set_num_tiles(tiles);
  p.policy = j.value("policy", std::string("imported"));
  if (j.contains("gathered_rows")) {
    const std::string gathered = j["gathered_rows"].is_string() ? j["gathered_rows"].get<std::string>() : "";
    if (gathered == "selected") {
      p.gathered = GatheredRows::selected;
    } else if (gathered == "full-topk") {
      p.gathered = GatheredRows::full_topk;
    } else if (gathered != "none") {
      throw InputError("gathered_rows", "must be none, selected or full-topk, got " + j["gathered_rows"].dump());
    }
  }
  return p;
}

AiterV1Args aiter_args_from_json(const json& in) {
  if (!in.is_object()) throw InputError("inputs", "must be a JSON object");
  const std::string w = "inputs.";
  AiterV1Args a;
  a.arch = parse_arch(get<std::string>(in, "arch", w));
  a.num_cu = get<int>(in, "num_cu", w);
  a.q_dtype = parse_dtype(get<std::string>(in, "q_dtype", w), w + "q_dtype");
  a.kv_dtype = parse_dtype(get_or<std::string>(in, "kv_dtype", std::string(dtype_name(a.q_dtype)), w), w + "kv_dtype");
  a.num_heads_per_head_k = get<int>(in, "num_heads_per_head_k", w);
  a.num_heads_k = get_or<int>(in, "num_heads_k", 1, w);
  a.is_causal = get_or<bool>(in, "is_causal", true, w);
  a.page_size = get_or<int>(in, "page_size", 1, w);
  a.kv_granularity = get_or<int>(in, "kv_granularity", 16, w);
  a.max_split_per_batch = get_or<int>(in, "max_split_per_batch", -1, w);
  a.fast_mode = get_or<bool>(in, "fast_mode", true, w);
  a.intra_batch_mode = get_or<bool>(in, "intra_batch_mode", false, w);
  a.experimental = get_or<int>(in, "AITER_ENABLE_EXPERIMENTAL", 0, w) != 0;
  a.is_cp_round_robin = get_or<bool>(in, "is_cp_round_robin", false, w);

  if (in.contains("seqlens_kv_indptr")) {
    a.seqlens_kv_indptr = int_list(in, "seqlens_kv_indptr", w);
  } else {  // build pages from token lengths
    const auto kv = int_list(in, "seqlens_kv", w);
    a.seqlens_kv_indptr.assign(1, 0);
    for (int32_t t : kv) {
      if (t <= 0) throw InputError(w + "seqlens_kv", "every length must be >= 1, got " + std::to_string(t));
      // Summed in 64 bits: the page offsets are int32 and must not overflow on the way.
      const int64_t end = int64_t{a.seqlens_kv_indptr.back()} + cdiv(int64_t{t}, int64_t{std::max(1, a.page_size)});
      if (end > std::numeric_limits<int32_t>::max())
        throw InputError(w + "seqlens_kv", "the batch's pages must fit int32, got " + std::to_string(end));
      a.seqlens_kv_indptr.push_back(static_cast<int32_t>(end));
    }
  }
  const size_t B = a.seqlens_kv_indptr.empty() ? 0 : a.seqlens_kv_indptr.size() - 1;
  if (in.contains("kv_last_page_lens")) {
    a.kv_last_page_lens = int_list(in, "kv_last_page_lens", w);
  } else if (in.contains("seqlens_kv")) {
    for (int32_t t : int_list(in, "seqlens_kv", w)) {
      // In 64 bits: a bad page_size (rejected by validate()) must not overflow here first.
      const int64_t pages = cdiv(int64_t{t}, int64_t{std::max(1, a.page_size)});
      a.kv_last_page_lens.push_back(static_cast<int32_t>(t - (pages - 1) * a.page_size));
    }
  } else {
    a.kv_last_page_lens.assign(B, 1);
  }
  if (in.contains("seqlens_qo_indptr")) {
    a.seqlens_qo_indptr = int_list(in, "seqlens_qo_indptr", w);
  } else {
    const auto qo = in.contains("seqlens_qo") ? int_list(in, "seqlens_qo", w) : std::vector<int32_t>(B, 1);
    a.seqlens_qo_indptr.assign(1, 0);
    for (int32_t q : qo) {
      const int64_t end = int64_t{a.seqlens_qo_indptr.back()} + q;
      if (end < std::numeric_limits<int32_t>::min() || end > std::numeric_limits<int32_t>::max())
        throw InputError(w + "seqlens_qo", "the batch's query rows must fit int32, got " + std::to_string(end));
      a.seqlens_qo_indptr.push_back(static_cast<int32_t>(end));
    }
  }
  // Query lengths as differences of the indptr, in 64 bits (its entries may be anything, null included, until
  // validate() checks them); the defaults below only need them clamped to int.
  int max_q = 0;
  bool uniform = true;
  const auto qo_len = [&](size_t i) { return int64_t{a.seqlens_qo_indptr[i + 1]} - a.seqlens_qo_indptr[i]; };
  for (size_t i = 0; i + 1 < a.seqlens_qo_indptr.size(); ++i) {
    max_q = static_cast<int>(std::clamp<int64_t>(std::max<int64_t>(max_q, qo_len(i)), 0, INT32_MAX));
    uniform = uniform && qo_len(i) == qo_len(0);
  }
  a.max_seqlen_qo = get_or<int>(in, "max_seqlen_qo", max_q, w);
  a.uni_seqlen_qo = get_or<int>(in, "uni_seqlen_qo", uniform ? max_q : -1, w);
  return a;
}

}  // namespace mlasim::sim
