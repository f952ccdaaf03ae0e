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

DecodeBatch gathered_batch(const DecodeBatch& sparse, GatheredRows rows) {
  if (rows == GatheredRows::none) throw std::logic_error("gathered_batch: a dense plan has no gathered rows");
  sparse.validate();
  const int64_t tokens = sparse.total_qo_tokens();
  // The per-token batch is planned like any other; keep it within what one batch may hold.
  constexpr int64_t kMaxTokens = 1 << 20;
  if (tokens > kMaxTokens)
    throw InputError("qo_lens", "sparse decode runs one request per query token; " + std::to_string(tokens) +
                                    " query tokens is more than " + std::to_string(kMaxTokens));
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
