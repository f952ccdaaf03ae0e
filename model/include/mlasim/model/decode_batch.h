#pragma once
// One decode step of DeepSeek-style MLA: the requests, their query and KV lengths, and the attention shape,
// dense or sparse (top-k).
#include <cstdint>
#include <vector>

#include "mlasim/model/dtype.h"
#include "mlasim/model/two_scopes.h"

namespace mlasim {

struct DecodeBatch {
  std::vector<int> qo_lens;  // query tokens per request (1 for plain decode, >1 for MTP / speculative steps)
  std::vector<int> kv_lens;  // KV tokens per request, including the new ones
  int q_heads = 16;          // total q heads (per kv head, since MLA has one kv head)
  int kv_heads = 1;
  DType q_dtype = DType::fp8;
  DType kv_dtype = DType::fp8;
  int page_size = 1;        // tokens per KV page
  int kv_granularity = 16;  // planner granule, in pages
  bool causal = true;
  // Sparse (DSA top-k) decode: each query token attends to at most `topk` selected KV rows of its request
  // instead of the whole context (fewer when the context is shorter); 0 = dense. Rows are gathered one by one
  // through kv_indices, so a sparse batch has page size 1.
  int topk = 0;
  std::vector<int> topk_lens;  // sparse: rows each request's tokens select (<= topk); empty = topk for every request
  // DeepSeek-V4's two scopes (a sliding window plus compressed rows), instead of a top-k: sparse too, page size 1.
  TwoScopes scopes;
  // The per-stream batch of a merged two-scope run (gathered_rows.h): the query token each request (a scope's
  // stream) belongs to, non-decreasing; the streams of one token are LSE-merged after the reduce. Empty: none.
  std::vector<int> merge_token;

  static constexpr int kQkHeadDim = 576;  // 512 latent (nope) + 64 rope
  static constexpr int kVHeadDim = 512;

  int size() const { return static_cast<int>(kv_lens.size()); }
  int max_qo_len() const;
  // The uniform query length, or -1 when requests differ.
  int uniform_qo_len() const;
  int64_t total_kv_tokens() const;
  int64_t total_qo_tokens() const;
  bool is_sparse() const { return topk > 0 || scopes.on(); }
  // The top-k of request `request`: its topk_lens entry, or topk.
  int topk_of(int request) const { return topk_lens.empty() ? topk : topk_lens[request]; }
  int pages(int request) const { return (kv_lens[request] + page_size - 1) / page_size; }
  int last_page_len(int request) const { return kv_lens[request] - (pages(request) - 1) * page_size; }

  // A merged two-scope run's query tokens of more than one stream, each as its first stream and its stream count: the
  // tokens whose streams the LSE merge after the reduce folds (a token of one stream needs no merge). Empty when
  // merge_token is.
  struct MergedToken {
    int first = 0;
    int streams = 0;
  };
  std::vector<MergedToken> merged_tokens() const;

  // Checks every field; throws InputError naming the first bad one.
  void validate() const;

  // A batch of `batch` requests with `context` KV tokens and `qo_len` query tokens each.
  static DecodeBatch uniform(int batch, int context, int qo_len = 1);

  // The most rows a sparse batch may select per token (DeepSeek-V3.2 selects 2048).
  static constexpr int kMaxTopk = 1 << 20;
};

bool is_power_of_two(int64_t v);

}  // namespace mlasim
