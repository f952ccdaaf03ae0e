#pragma once
// Runs any Plan numerically on the CPU, as the persistent kernel and the reduce would, on small random fp32
// tensors; and computes the same attention directly. Equal results prove the plan covers every query row
// and KV position correctly (splits, partial rows, reduce maps, head folding, causal masks).
#include <cstdint>
#include <vector>

#include "mlasim/model/decode_batch.h"
#include "mlasim/sim/plan.h"

namespace mlasim::sim {

struct ReferenceOptions {
  int d_qk = DecodeBatch::kQkHeadDim;  // Q/K head dim (MLA: 576 = 512 latent + 64 rope)
  int d_v = DecodeBatch::kVHeadDim;    // V head dim: V is the first d_v dims of the KV row (MLA)
  uint64_t seed = 1;
  std::vector<int> heads;  // heads to compute; empty = all (tests sample heads to stay fast)
};

// Output layout: [q row (request order, unfolded)][head][d_v]; heads not computed stay 0.
class ReferenceExecutor {
 public:
  ReferenceExecutor(const DecodeBatch& batch, ReferenceOptions options = {});

  // Stage 1 (each work -> final rows or fp32 partial + LSE) then the reduce (LSE merge of each split tile).
  std::vector<float> run_plan(const Plan& plan) const;
  // Softmax attention per (request, query token, head) over its causal KV window.
  std::vector<float> run_direct() const;

  const std::vector<int>& heads() const { return heads_; }
  int total_q_rows() const { return total_q_rows_; }

 private:
  struct RowResult {
    float lse;  // -inf when no position was visible
  };
  // Attention of one (original row, head) over global token slots [slot_begin, slot_end) of request r.
  RowResult attend(int request, int token, int head, int64_t slot_begin, int64_t slot_end, float* out) const;

  const DecodeBatch& batch_;
  ReferenceOptions opt_;
  std::vector<int> heads_;
  std::vector<int> qo_indptr_;  // rows
  std::vector<int> kv_indptr_;  // pages
  int total_q_rows_ = 0;
  std::vector<float> q_;   // [row][head][d_qk]
  std::vector<float> kv_;  // [page * page_size + slot][d_qk]
  float scale_ = 1.0f;
};

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b);
float max_abs_value(const std::vector<float>& a);

}  // namespace mlasim::sim
