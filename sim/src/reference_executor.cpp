#include "mlasim/sim/reference_executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace mlasim::sim {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

ReferenceExecutor::ReferenceExecutor(const DecodeBatch& batch, ReferenceOptions options)
    : batch_(batch), opt_(std::move(options)) {
  batch_.validate();
  heads_ = opt_.heads;
  if (heads_.empty())
    for (int h = 0; h < batch_.q_heads; ++h) heads_.push_back(h);
  const int n = batch_.size();
  qo_indptr_.assign(static_cast<size_t>(n) + 1, 0);
  kv_indptr_.assign(static_cast<size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) {
    qo_indptr_[r + 1] = qo_indptr_[r] + batch_.qo_lens[r];
    kv_indptr_[r + 1] = kv_indptr_[r] + batch_.pages(r);
  }
  total_q_rows_ = qo_indptr_[n];
  std::mt19937_64 rng(opt_.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  q_.resize(static_cast<size_t>(total_q_rows_) * batch_.q_heads * opt_.d_qk);
  for (float& x : q_) x = normal(rng);
  kv_.resize(static_cast<size_t>(kv_indptr_[n]) * batch_.page_size * opt_.d_qk);
  for (float& x : kv_) x = normal(rng);
  scale_ = 1.0f / std::sqrt(static_cast<float>(opt_.d_qk));
}

ReferenceExecutor::RowResult ReferenceExecutor::attend(int r, int token, int head, int64_t slot_begin, int64_t slot_end,
                                                       float* out) const {
  const int L = batch_.kv_lens[r];
  const int qlen = batch_.qo_lens[r];
  const int64_t first_slot = int64_t{kv_indptr_[r]} * batch_.page_size;
  const int64_t last_visible = batch_.causal ? L - qlen + token : L - 1;  // position within the request
  const float* q = &q_[(static_cast<size_t>(qo_indptr_[r] + token) * batch_.q_heads + head) * opt_.d_qk];
  float m = kNegInf, l = 0.0f;
  std::fill(out, out + opt_.d_v, 0.0f);
  for (int64_t s = slot_begin; s < slot_end; ++s) {
    const int64_t pos = s - first_slot;
    if (pos < 0 || pos > last_visible) continue;  // beyond the causal window (or a padded page slot)
    const float* k = &kv_[static_cast<size_t>(s) * opt_.d_qk];
    float dot = 0.0f;
    for (int d = 0; d < opt_.d_qk; ++d) dot += q[d] * k[d];
    const float score = dot * scale_;
    const float m_new = std::max(m, score);
    const float alpha = std::exp(m - m_new), p = std::exp(score - m_new);
    l = l * alpha + p;
    for (int d = 0; d < opt_.d_v; ++d) out[d] = out[d] * alpha + p * k[d];
    m = m_new;
  }
  if (l == 0.0f) return {kNegInf};
  for (int d = 0; d < opt_.d_v; ++d) out[d] /= l;
  return {m + std::log(l)};
}

std::vector<float> ReferenceExecutor::run_direct() const {
  std::vector<float> out(static_cast<size_t>(total_q_rows_) * batch_.q_heads * opt_.d_v, 0.0f);
  for (int r = 0; r < batch_.size(); ++r) {
    const int64_t begin = int64_t{kv_indptr_[r]} * batch_.page_size;
    for (int t = 0; t < batch_.qo_lens[r]; ++t)
      for (int h : heads_)
        attend(r, t, h, begin, begin + batch_.kv_lens[r],
               &out[(static_cast<size_t>(qo_indptr_[r] + t) * batch_.q_heads + h) * opt_.d_v]);
  }
  return out;
}

std::vector<float> ReferenceExecutor::run_plan(const Plan& plan) const {
  const int R = plan.derived.qk_batch_ratio;
  const int H = plan.derived.num_heads_eff;
  const int uni = batch_.uniform_qo_len();
  if (R > 1 && uni <= 0) throw std::invalid_argument("a folded plan needs a uniform query length");
  if (H * R != batch_.q_heads)
    throw std::invalid_argument("plan heads (" + std::to_string(H * R) + ") differ from the batch's " +
                                std::to_string(batch_.q_heads));
  // Folded q/o row fr of virtual batch b -> (request, token): rows [b*qlen, (b+1)*qlen) when folded.
  auto locate = [&](int b, int fr) {
    const int r = b / R;
    const int qbeg = R > 1 ? b * uni : qo_indptr_[r];
    return std::make_pair(r, fr - qbeg);
  };
  auto selected = [&](int head) { return std::find(heads_.begin(), heads_.end(), head) != heads_.end(); };

  int partial_rows = 0;
  for (const WorkInfo& w : plan.works)
    if (w.is_partial()) partial_rows = std::max(partial_rows, w.partial_qo_loc + w.qo_rows());
  std::vector<float> part_o(static_cast<size_t>(partial_rows) * H * opt_.d_v, 0.0f);
  std::vector<float> part_lse(static_cast<size_t>(partial_rows) * H, kNegInf);
  std::vector<float> out(static_cast<size_t>(total_q_rows_) * batch_.q_heads * opt_.d_v, 0.0f);
  std::vector<float> tmp(static_cast<size_t>(opt_.d_v));

  // Stage 1: every work of every cluster (the order does not change the numbers).
  for (const WorkInfo& w : plan.works) {
    const int64_t slot_begin = int64_t{w.kv_start} * batch_.page_size;
    const int64_t slot_end = int64_t{w.kv_end} * batch_.page_size;
    for (int fr = w.qo_start; fr < w.qo_end; ++fr) {
      const auto [r, token] = locate(w.batch_idx, fr);
      for (int hh = 0; hh < H; ++hh) {
        const int head = (w.batch_idx % R) * H + hh;
        if (!selected(head)) continue;
        const RowResult res = attend(r, token, head, slot_begin, slot_end, tmp.data());
        if (!w.is_partial()) {
          std::copy(tmp.begin(), tmp.end(),
                    &out[(static_cast<size_t>(qo_indptr_[r] + token) * batch_.q_heads + head) * opt_.d_v]);
        } else {
          const size_t row = static_cast<size_t>(w.partial_qo_loc + (fr - w.qo_start));
          std::copy(tmp.begin(), tmp.end(), &part_o[(row * H + hh) * opt_.d_v]);
          part_lse[row * H + hh] = res.lse;
        }
      }
    }
  }

  // Stage 2: LSE merge of each split tile's partials, in the order the partial map lists them.
  for (int t = 0;
       t + 1 < static_cast<int>(plan.reduce_indptr.size()) && t < static_cast<int>(plan.reduce_final_map.size()); ++t) {
    const int begin = plan.reduce_indptr[t], end = plan.reduce_indptr[t + 1];
    if (end - begin < 2 || begin >= plan.num_partials()) continue;  // n <= 1: stage 1 wrote the final rows
    const auto [qs, qe] = plan.reduce_final_map[t];
    // The tile's virtual batch: folded rows are b*uni.. when folded, else found through the request indptr.
    for (int fr = qs; fr < qe; ++fr) {
      int b;
      if (R > 1) {
        b = fr / uni;
      } else {
        b = static_cast<int>(std::upper_bound(qo_indptr_.begin(), qo_indptr_.end(), fr) - qo_indptr_.begin()) - 1;
      }
      const auto [r, token] = locate(b, fr);
      for (int hh = 0; hh < H; ++hh) {
        const int head = (b % R) * H + hh;
        if (!selected(head)) continue;
        float m = kNegInf;
        for (int i = begin; i < end; ++i) {
          const size_t row = static_cast<size_t>(plan.reduce_partial_map[i] + (fr - qs));
          m = std::max(m, part_lse[row * H + hh]);
        }
        float* o = &out[(static_cast<size_t>(qo_indptr_[r] + token) * batch_.q_heads + head) * opt_.d_v];
        std::fill(o, o + opt_.d_v, 0.0f);
        if (m == kNegInf) continue;
        float sum = 0.0f;
        for (int i = begin; i < end; ++i) {
          const size_t row = static_cast<size_t>(plan.reduce_partial_map[i] + (fr - qs));
          const float s = std::exp(part_lse[row * H + hh] - m);
          sum += s;
          const float* po = &part_o[(row * H + hh) * opt_.d_v];
          for (int d = 0; d < opt_.d_v; ++d) o[d] += s * po[d];
        }
        for (int d = 0; d < opt_.d_v; ++d) o[d] /= sum;
      }
    }
  }
  return out;
}

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) {
    const float d = std::fabs(a[i] - b[i]);
    if (!(d <= m)) m = d;  // NaN propagates as the maximum
  }
  return m;
}

float max_abs_value(const std::vector<float>& a) {
  float m = 0.0f;
  for (float x : a) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace mlasim::sim
