#include "mlasim/model/gathered_rows.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mlasim/model/input_error.h"

namespace mlasim {

std::string_view gathered_rows_name(GatheredRows rows) {
  switch (rows) {
    case GatheredRows::none: return "none";
    case GatheredRows::selected: return "selected";
    case GatheredRows::full_topk: return "full-topk";
  }
  return "none";
}

namespace {

// The per-token batch is planned like any other; keep it within what one batch may hold.
constexpr int64_t kMaxTokens = 1 << 20;

void check_tokens(int64_t tokens, const char* what) {
  if (tokens > kMaxTokens)
    throw InputError("qo_lens",
                     std::string(what) + std::to_string(tokens) + " is more than " + std::to_string(kMaxTokens));
}

// Rows FlashMLA walks for a window of `rows` rows: whole 64-row blocks, at least one.
int flashmla_window_rows(int rows) { return std::max((rows + 63) / 64 * 64, 64); }

}  // namespace

DecodeBatch scope_stream_batch(const DecodeBatch& b, GatheredRows rows) {
  if (!b.scopes.on()) throw std::logic_error("scope_stream_batch: not a two-scope batch");
  if (rows == GatheredRows::none) throw std::logic_error("scope_stream_batch: a dense plan has no gathered rows");
  b.validate();
  const bool merged = b.scopes.run == TwoScopes::Run::merged;
  check_tokens(b.total_qo_tokens() * (merged ? 2 : 1), "two-scope decode runs one request per stream; streams: ");
  DecodeBatch s = b;
  s.scopes = {};
  s.kv_lens.clear();
  s.merge_token.clear();
  int token = 0;
  for (int r = 0; r < b.size(); ++r) {
    const int q = b.qo_lens[r];
    for (int t = 0; t < q; ++t, ++token) {
      const int64_t position = b.causal ? int64_t{b.kv_lens[r]} - q + t : int64_t{b.kv_lens[r]} - 1;
      int window = b.scopes.window_rows(position);
      if (rows == GatheredRows::full_topk) window = flashmla_window_rows(window);
      const int extra = b.scopes.extra_rows(position);
      if (!merged) {
        s.kv_lens.push_back(window + extra);
        continue;
      }
      s.kv_lens.push_back(window);
      s.merge_token.push_back(token);
      if (extra > 0) {
        s.kv_lens.push_back(extra);
        s.merge_token.push_back(token);
      }
    }
  }
  s.qo_lens.assign(s.kv_lens.size(), 1);
  s.topk_lens = s.kv_lens;
  s.topk = *std::max_element(s.kv_lens.begin(), s.kv_lens.end());
  // A stream is a top-k batch's row list: more rows than a top-k may hold are the scopes' doing (a window and
  // compressed rows of a context this long), so the error names them, not a --topk the user never gave.
  if (s.topk > DecodeBatch::kMaxTopk)
    throw InputError("dsv4", "a query token's scopes hold " + std::to_string(s.topk) + " rows (window + compressed" +
                                 " rows), more than the " + std::to_string(DecodeBatch::kMaxTopk) +
                                 " one stream may gather; use a larger compress_ratio, an extra_topk, or a shorter "
                                 "context");
  s.validate();
  return s;
}

DecodeBatch gathered_batch(const DecodeBatch& sparse, GatheredRows rows) {
  if (rows == GatheredRows::none) throw std::logic_error("gathered_batch: a dense plan has no gathered rows");
  if (sparse.scopes.on()) return gathered_batch(scope_stream_batch(sparse, rows), rows);
  sparse.validate();
  const int64_t tokens = sparse.total_qo_tokens();
  check_tokens(tokens, "sparse decode runs one request per query token; query tokens: ");
  DecodeBatch g = sparse;
  g.topk = 0;
  g.topk_lens.clear();
  g.page_size = 1;
  g.kv_lens.clear();
  g.kv_lens.reserve(static_cast<size_t>(tokens));
  for (int r = 0; r < sparse.size(); ++r) {
    const int q = sparse.qo_lens[r];
    const int k = sparse.topk_of(r);
    for (int t = 0; t < q; ++t) {
      // Token t sits at position kv_len - q + t: causally it sees that many rows plus itself.
      const int context = sparse.causal ? sparse.kv_lens[r] - q + t + 1 : sparse.kv_lens[r];
      g.kv_lens.push_back(rows == GatheredRows::selected ? std::min(context, k) : k);
    }
  }
  g.qo_lens.assign(g.kv_lens.size(), 1);
  g.validate();
  return g;
}

}  // namespace mlasim
