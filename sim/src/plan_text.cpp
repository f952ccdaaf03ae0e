#include "mlasim/sim/plan_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace mlasim::sim {
namespace {

std::string lens_text(const std::vector<int>& v) {
  if (v.empty()) return "-";
  if (std::all_of(v.begin(), v.end(), [&](int x) { return x == v[0]; })) return fmt::format("{} x {}", v.size(), v[0]);
  std::string s;
  for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  if (v.size() > 8) s += fmt::format(",... ({} requests)", v.size());
  return s;
}

// "r3 6272p" style descriptor of a cluster's works: request, KV tokens, p(artial) or f(inal).
std::string works_text(const Plan& p, int c, int page_size) {
  std::string s;
  for (int w = p.work_begin(c); w < p.work_end(c); ++w) {
    const WorkInfo& wk = p.works[w];
    if (!s.empty()) s += " ";
    std::string req = fmt::format("r{}", p.request_of(wk));
    if (p.derived.qk_batch_ratio > 1) req += fmt::format(".h{}", p.head_group_of(wk));
    s += fmt::format("{}:{}{}", req, int64_t{wk.kv_pages()} * page_size, wk.is_partial() ? "p" : "f");
  }
  return s;
}

}  // namespace

std::string describe_workload(const DecodeBatch& b, const Gpu& g, int clusters) {
  const int uq = b.uniform_qo_len();
  std::string sparse;
  if (b.scopes.on())
    sparse = ", DSv4 scopes: " + describe_scopes(b.scopes);
  else if (b.is_sparse())
    sparse = b.topk_lens.empty() ? fmt::format(", top-k {}", b.topk)
                                 : fmt::format(", top-k {} ({} per request)", b.topk, lens_text(b.topk_lens));
  return fmt::format("{} tokens{}, {} heads, {}/{}, qlen {}, page {}, granule {} on {} ({} of {} CUs)",
                     lens_text(b.kv_lens), sparse, b.q_heads, dtype_name(b.q_dtype), dtype_name(b.kv_dtype),
                     uq > 0 ? std::to_string(uq) : lens_text(b.qo_lens), b.page_size, b.kv_granularity, g.name,
                     clusters > 0 ? clusters : g.num_cu, g.num_cu);
}

std::string format_plan_text(const Plan& p, int page_size) {
  std::string out;
  const int nc = p.num_work_lists();
  const int active = p.active_clusters();
  int split_tiles = 0;
  for (size_t t = 0; t + 1 < p.reduce_indptr.size() && t < static_cast<size_t>(p.num_tiles()); ++t)
    split_tiles += p.reduce_indptr[t + 1] > p.reduce_indptr[t] ? 1 : 0;
  const auto splits = p.splits_per_request();
  out += fmt::format("policy          {}\n", p.policy);
  if (p.kernel == KernelKind::grid)
    out += fmt::format("grid            {} workgroups, placed on the CUs by the hardware\n", nc);
  else
    out += fmt::format("clusters used   {} of {} ({:.1f}%)\n", active, nc, nc ? 100.0 * active / nc : 0.0);
  out += fmt::format("works           {}\n", p.num_works());
  // A sparse plan's requests are the batch's query tokens.
  out += fmt::format("{}  {}\n", p.gathered == GatheredRows::none ? "splits/request" : "splits/token  ",
                     lens_text(splits));
  const bool aiter = p.policy.rfind("aiter-v1", 0) == 0;
  if (aiter)
    out += fmt::format(
        "payload         {} granules per cluster (sum {}, NS {}, OV {}, {} virtual batches, {} heads each)\n",
        p.model.payload_blocks, p.model.sum_blocks, p.derived.num_splits, p.derived.fixed_over_head_num_blocks,
        p.derived.num_batches_eff, p.derived.num_heads_eff);
  else
    out += fmt::format("planner         split budget {}, {} virtual batches of {} heads\n", p.derived.num_splits,
                       p.derived.num_batches_eff, p.derived.num_heads_eff);
  out +=
      fmt::format("reduce          {} of {} tiles split, {} partials\n", split_tiles, p.num_tiles(), p.num_partials());
  if (p.model.unassigned_tiles > 0)
    out += fmt::format("WARNING         {} tiles were left without a cluster\n", p.model.unassigned_tiles);
  out += p.kernel == KernelKind::grid
             ? "\nworkgroup  works  kv tokens  work (request:tokens, p = partial, f = final)\n"
             : "\ncluster    works  kv tokens  work list (request:tokens, p = partial, f = final)\n";
  int c = 0;
  while (c < nc) {
    // A run: consecutive clusters with the same work count, KV tokens and kinds of works.
    auto shape = [&](int k) {
      int64_t tokens = 0;
      std::string kinds;
      for (int w = p.work_begin(k); w < p.work_end(k); ++w) {
        tokens += int64_t{p.works[w].kv_pages()} * page_size;
        kinds += p.works[w].is_partial() ? 'p' : 'f';
      }
      return std::make_pair(tokens, kinds);
    };
    const auto first = shape(c);
    int end = c + 1;
    while (end < nc && shape(end) == first) ++end;
    const std::string range = end - c > 1 ? fmt::format("{}-{}", c, end - 1) : std::to_string(c);
    const int n = p.work_end(c) - p.work_begin(c);
    if (n == 0) {
      out += fmt::format("{:<10} {:>5}  {:>9}  (idle)\n", range, 0, 0);
    } else {
      std::string list = works_text(p, c, page_size);
      if (end - c > 1) list += fmt::format(" ... {}", works_text(p, end - 1, page_size));
      out += fmt::format("{:<10} {:>5}  {:>9}  {}\n", range, n, first.first, list);
    }
    c = end;
  }
  return out;
}

}  // namespace mlasim::sim
