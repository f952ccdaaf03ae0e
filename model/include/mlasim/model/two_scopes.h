#pragma once
// DeepSeek-V4's two attention scopes (docs/sparse.md): each query token attends to the last `window` rows of its
// request (the sliding window) and to "extra" rows of the compressed cache, one row per `compress_ratio` tokens
// (every committed one, or the indexer's `extra_topk` of them), in one softmax with a per-head attention sink.
#include <cstdint>
#include <string>
#include <string_view>

namespace mlasim {

struct TwoScopes {
  // How the scopes run. one_pass: both scopes' rows in one index list per token, one walk and no merge (FlashMLA,
  // ATOM and AITER's V4 kernels). merged: each scope its own index stream, planned and split on its own, the two
  // outputs of a token joined by an LSE merge that folds the sink.
  enum class Run { one_pass, merged };

  int window = 0;          // rows of the sliding window; 0: not a two-scope batch
  int compress_ratio = 0;  // tokens per compressed row; 0: no compressed scope (a sliding-window-only layer)
  int extra_topk = 0;      // compressed rows the indexer selects; 0: every committed one (HCA)
  Run run = Run::one_pass;

  bool on() const { return window > 0; }
  // Rows of each scope for the token at causal position `position` (0-based; it sees position + 1 tokens).
  int window_rows(int64_t position) const;
  int extra_rows(int64_t position) const;
  // Throws InputError naming the field unless the values describe two scopes (or are all 0).
  void validate() const;
  bool operator==(const TwoScopes&) const = default;

  // DeepSeek-V4's layer kinds, window 128: csa (compress ratio 4, the indexer's top 1024), hca (ratio 128, every
  // compressed row), swa (the window alone). Throws InputError("dsv4", ...) for another name.
  static TwoScopes preset(std::string_view layer);
  static constexpr int kMaxWindow = 1 << 20;
  static constexpr int kMaxCompressRatio = 1 << 16;
};

std::string_view scope_run_name(TwoScopes::Run run);  // "one-pass", "merged"
// Throws InputError(field, ...) unless `text` is one-pass or merged.
TwoScopes::Run parse_scope_run(std::string_view text, const std::string& field);
// "window 128 + compressed 1/4 (top 1024), one pass"
std::string describe_scopes(const TwoScopes& s);

}  // namespace mlasim
