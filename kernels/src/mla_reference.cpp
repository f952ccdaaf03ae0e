#include "mlasim/kernels/mla_reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

namespace mlasim::kernels {

std::vector<float> mla_reference(const MlaProblem& p, int threads) {
  constexpr int kDqk = DecodeBatch::kQkHeadDim, kDv = DecodeBatch::kVHeadDim;
  std::vector<float> out(static_cast<size_t>(p.q_rows) * p.heads * kDv, 0.f);
  const int vbatches = static_cast<int>(p.batch_q_begin.size());
  const bool fp8 = p.batch.kv_dtype == DType::fp8;
  auto kv_at = [&](int64_t slot, int d) {
    const size_t i = static_cast<size_t>(slot) * kDqk + d;
    return fp8 ? fp8_e4m3_to_float(p.kv[i]) * p.kv_scale
               : bf16_to_float(reinterpret_cast<const uint16_t*>(p.kv.data())[i]);
  };
  std::atomic<int> next{0};
  auto worker = [&] {
    std::vector<float> k, s;
    for (int b; (b = next.fetch_add(1)) < vbatches;) {
      const int len = p.batch_kv_len[b], qlen = p.batch_qlen[b], ps = p.batch.page_size;
      // The request's KV rows, gathered through the page table once.
      k.assign(static_cast<size_t>(len) * kDqk, 0.f);
      for (int t = 0; t < len; ++t) {
        const int64_t slot = static_cast<int64_t>(p.kv_indices[p.batch_kv_page_begin[b] + t / ps]) * ps + t % ps;
        for (int d = 0; d < kDqk; ++d) k[static_cast<size_t>(t) * kDqk + d] = kv_at(slot, d);
      }
      for (int i = 0; i < qlen; ++i) {
        const int visible = p.batch.causal ? len - qlen + i + 1 : len;
        const int row = p.batch_q_begin[b] + i;
        for (int h = 0; h < p.heads; ++h) {
          const uint16_t* q = &p.q[(static_cast<size_t>(row) * p.heads + h) * kDqk];
          float qf[kDqk];
          for (int d = 0; d < kDqk; ++d) qf[d] = bf16_to_float(q[d]);
          s.assign(std::max(visible, 0), 0.f);
          float mx = -INFINITY;
          for (int t = 0; t < visible; ++t) {
            const float* kt = &k[static_cast<size_t>(t) * kDqk];
            float acc = 0.f;
            for (int d = 0; d < kDqk; ++d) acc += qf[d] * kt[d];
            s[t] = acc * p.sm_scale;
            mx = std::max(mx, s[t]);
          }
          float sum = 0.f;
          for (float& x : s) sum += (x = std::exp(x - mx));
          float* o = &out[(static_cast<size_t>(row) * p.heads + h) * kDv];
          for (int t = 0; t < visible; ++t) {
            const float w = s[t] / sum;
            const float* vt = &k[static_cast<size_t>(t) * kDqk];
            for (int d = 0; d < kDv; ++d) o[d] += w * vt[d];
          }
        }
      }
    }
  };
  const int n = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int i = 0; i < n; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return out;
}

ErrorSummary compare_to_reference(const std::vector<uint16_t>& out_bf16, const std::vector<float>& ref) {
  ErrorSummary e;
  for (size_t i = 0; i < ref.size() && i < out_bf16.size(); ++i) {
    const float v = bf16_to_float(out_bf16[i]);
    if (std::isnan(v) || std::isinf(v)) e.has_nan = true;
    e.max_abs_err = std::max(e.max_abs_err, static_cast<double>(std::fabs(v - ref[i])));
    e.output_scale = std::max(e.output_scale, static_cast<double>(std::fabs(ref[i])));
  }
  if (out_bf16.size() != ref.size()) e.has_nan = true;
  return e;
}

}  // namespace mlasim::kernels
