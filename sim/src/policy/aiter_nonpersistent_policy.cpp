// aiter-nonpersistent: mla_decode_fwd without persistent metadata (split-policies spec section 1).
// A grid of one workgroup per (q block, request, split), scheduled by the hardware, then Triton's stage-2 reduce.
//
// Split count S (1.2): Python's get_meta_param in double precision (wave efficiency x 84.1-token HBM term,
// first maximum over 1..16, fp8 minimum-block caps), or a fixed count, or the unmerged v0 rules (section 2).
// KV of a split (1.4): the request is cut into K-entry blocks dealt round-robin to the S splits, so split s owns
// blocks s, s+S, ... The plan keeps one work per workgroup and gives split s the contiguous range with the same
// token count, splits in index order: every KV position is still read exactly once, each workgroup streams the
// same bytes, and the online-softmax merge does not depend on which positions a split holds.
// Workgroups whose split owns no block exit at once and write nothing; the plan leaves them out (the real grid
// has batch x S x q-block workgroups: derived.num_splits is S).
// Reduce: on the real path stage 1 writes fp32 partials for every split and Triton's stage 2 merges every
// request, also one with a single non-empty split (bf16, or fp8 with S > 1); fp8 with S = 1 writes the output and
// skips stage 2 (1.3 K4). The plan follows the Plan contract: a tile with one work is final and only split tiles
// are in the reduce maps, so stage 2's pass over one-split requests is not part of the plan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/int_math.h"
#include "mlasim/sim/kernel_traits.h"
#include "plan_assembly.h"

namespace mlasim::sim {
namespace {

constexpr double kSplitCostTokens = 84.1;  // get_meta_param's fixed cost per split, in tokens
constexpr int kMaxAutoSplits = 16;

// Python's float floor division a // b for b > 0 (fmod-based, as CPython computes it).
double python_floordiv(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

// Minimum KV block per split for fp8 q, keyed by heads x max query length (get_meta_param's table).
int fp8_min_block(int heads_x_qlen) {
  switch (heads_x_qlen) {
    case 8:
    case 48:
    case 64: return 64;
    case 16:
    case 24:
    case 32: return 128;
    case 128:
    case 256:
    case 384:
    case 512: return 32;
    default:
      throw InputError(
          "heads", "AITER's fp8 split rule has no minimum block for heads x qlen = " + std::to_string(heads_x_qlen) +
                       " (known: 8, 16, 24, 32, 48, 64, 128, 256, 384, 512)");
  }
}

// 1.2 S3-S5: the i in 1..16 with the best wave efficiency x HBM efficiency; the first maximum wins.
int best_efficiency_split(int bs, double avg, int cu) {
  int best = 1;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int i = 1; i <= kMaxAutoSplits; ++i) {
    const int64_t wgs = int64_t{bs} * i;
    const double score =
        static_cast<double>(wgs) / static_cast<double>(cdiv(wgs, cu) * cu) * avg / (avg + kSplitCostTokens * i);
    if (score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

// 1.2 S1-S6: the split count get_meta_param returns when the caller passes num_kv_splits=None.
int meta_split_count(int bs, int64_t total_kv, int heads, int max_qlen, DType q_dtype, int cu) {
  const double avg = static_cast<double>(total_kv) / bs;
  const int best = best_efficiency_split(bs, avg, cu);
  if (q_dtype != DType::fp8) return best;
  const int mbn = fp8_min_block(heads * max_qlen);
  int s = static_cast<int>(std::min<int64_t>(best, cdiv(total_kv, int64_t{bs} * mbn)));
  if (s > 1) s = std::min(s, static_cast<int>(python_floordiv(std::fabs(avg - max_qlen), mbn)) + 1);
  return s;
}

// Section 2 V2-V3, as written: float32, argmin of an efficiency (bs_ratio multiplies by CU).
int v0_split_count(int bs, int64_t len, int cu) {
  int best = 1;
  float best_overhead = std::numeric_limits<float>::infinity();
  for (int s = 1; s <= kMaxAutoSplits; ++s) {
    const int64_t wgs = int64_t{bs} * s;
    const float bs_ratio = static_cast<float>(wgs) / static_cast<float>(cdiv(wgs, cu)) * static_cast<float>(cu);
    const float sq_ratio = static_cast<float>(len) / (static_cast<float>(len) + 84.1f * static_cast<float>(s));
    const float overhead = bs_ratio * sq_ratio;
    if (overhead < best_overhead) {
      best = s;
      best_overhead = overhead;
    }
  }
  return best;
}

// Section 2 V5 "as intended": get_meta_param per request (A = the request's length), no fp8 caps.
int v0_intended_split_count(int bs, int64_t len, int cu) {
  return best_efficiency_split(bs, static_cast<double>(len), cu);
}

enum class SplitRule { meta, v0, v0_intended };

// The knobs, read once; nullopt is "auto": derived from the workload.
struct Knobs {
  std::optional<int> num_kv_splits;  // auto: the split rule's count
  SplitRule rule = SplitRule::meta;
  std::optional<int> block;               // auto: 128 for fp8 on gfx950, else 64
  std::optional<int> cu_num;              // auto: the clusters of the request
  std::optional<int64_t> graph_total_kv;  // auto: the batch's
};

class AiterNonpersistentPolicy final : public SplitPolicy {
 public:
  AiterNonpersistentPolicy(const PolicySpec& spec, Knobs k) : SplitPolicy(spec), k_(k) {}
  KernelKind kernel() const override { return KernelKind::grid; }
  // Sparse batches: a dense plan over each query token's selected rows, as vLLM's and ATOM's AITER backends call it.
  GatheredRows sparse_rows() const override { return GatheredRows::selected; }

 private:
  Plan build_plan(const PlanRequest& r) const override {
    const int clusters = detail::usable_clusters(r);
    const DecodeBatch& batch = r.batch;
    check_batch(batch);
    const int B = batch.size();
    const int heads = batch.q_heads;
    const bool fp8 = batch.q_dtype == DType::fp8;
    const int sub_q = heads == 128 || fp8 ? 128 : 16;  // q rows per workgroup (1.3 K1-K2)
    const int K = k_.block ? *k_.block : (fp8 && r.arch == Arch::gfx950 ? 128 : 64);
    const int cu = k_.cu_num ? *k_.cu_num : clusters;

    std::vector<int> splits(static_cast<size_t>(B));
    if (k_.num_kv_splits) {
      std::fill(splits.begin(), splits.end(), *k_.num_kv_splits);
    } else if (k_.rule == SplitRule::meta) {
      const int64_t total_kv = k_.graph_total_kv ? *k_.graph_total_kv : batch.total_kv_tokens();
      std::fill(splits.begin(), splits.end(),
                meta_split_count(B, total_kv, heads, batch.max_qo_len(), batch.q_dtype, cu));
    } else {
      for (int b = 0; b < B; ++b)
        splits[b] = k_.rule == SplitRule::v0 ? v0_split_count(B, batch.pages(b), cu)
                                             : v0_intended_split_count(B, batch.pages(b), cu);
    }
    const int s_max = *std::max_element(splits.begin(), splits.end());

    // Per request: where each split's contiguous equivalent starts (1.4 R3: split s owns cdiv(nb - s, S) blocks,
    // the last, possibly short, block nb - 1 belongs to split (nb - 1) mod S).
    std::vector<std::vector<int64_t>> starts(static_cast<size_t>(B));
    int64_t sum_blocks = 0, largest = 0;
    for (int b = 0; b < B; ++b) {
      const int64_t L = batch.pages(b), nb = cdiv(L, K), S = splits[b];
      sum_blocks += nb;
      largest = std::max(largest, cdiv(nb, S));
      auto& st = starts[b];
      st.push_back(0);
      for (int64_t s = 0; s < std::min(S, nb); ++s) {
        const int64_t tokens = cdiv(nb - s, S) * K - (s == (nb - 1) % S ? nb * K - L : 0);
        st.push_back(st.back() + tokens);
      }
    }

    detail::PlanAssembler a(batch, {1, heads, sub_q / heads}, name());
    // Launch order: q block fastest, then request, then split (1.3 K3).
    for (int s = 0; s < s_max; ++s)
      for (int b = 0; b < B; ++b) {
        if (s + 1 >= static_cast<int>(starts[b].size())) continue;  // split beyond S_b or without blocks: exits
        for (int x = 0; x < a.tiles_per_batch(b); ++x) a.add_workgroup(a.tile_of(b, x), starts[b][s], starts[b][s + 1]);
      }
    Plan plan = a.finish(KernelKind::grid, 0);
    plan.derived.num_splits = s_max;
    plan.model.sum_blocks = sum_blocks;
    plan.model.payload_blocks = largest;
    plan.model.packed_qo_len_per_wg = sub_q;
    plan.model.qo_splits = sub_q / heads < batch.max_qo_len();
    return plan;
  }

  void check_batch(const DecodeBatch& batch) const {
    if (batch.q_heads != 16 && batch.q_heads != 128)
      throw InputError("heads", "aiter-nonpersistent models the 16- and 128-head stage-1 kernels, got " +
                                    std::to_string(batch.q_heads));
    if (batch.q_dtype != batch.kv_dtype)
      throw InputError("kv_dtype", "aiter-nonpersistent models fp8/fp8 and bf16/bf16 kernels, got " +
                                       std::string(dtype_name(batch.q_dtype)) + "/" +
                                       std::string(dtype_name(batch.kv_dtype)));
    if (batch.page_size != 1)
      throw InputError("page_size",
                       "aiter-nonpersistent: the non-persistent kernels read one KV index per token "
                       "(page size 1), got " +
                           std::to_string(batch.page_size));
  }

  Knobs k_;
};

}  // namespace

std::unique_ptr<SplitPolicy> make_aiter_nonpersistent(const KnobValues& k) {
  Knobs knobs;
  knobs.num_kv_splits = k.integer_or_derived<int>("num_kv_splits");
  const std::string& rule = k.word("split_rule");
  knobs.rule = rule == "v0" ? SplitRule::v0 : rule == "v0-intended" ? SplitRule::v0_intended : SplitRule::meta;
  if (knobs.num_kv_splits && knobs.rule != SplitRule::meta)
    throw InputError("split_rule", "chooses the split count only with num_kv_splits=auto; got split_rule=" + rule +
                                       " with num_kv_splits=" + std::to_string(*knobs.num_kv_splits));
  knobs.block = k.integer_or_derived<int>("block");
  knobs.cu_num = k.integer_or_derived<int>("cu_num");
  knobs.graph_total_kv = k.integer_or_derived("graph_total_kv");
  if (knobs.graph_total_kv && (knobs.num_kv_splits || knobs.rule != SplitRule::meta))
    throw InputError("graph_total_kv",
                     "freezes get_meta_param's input; it needs num_kv_splits=auto and split_rule=meta");
  return std::make_unique<AiterNonpersistentPolicy>(k.spec(), knobs);
}

}  // namespace mlasim::sim
