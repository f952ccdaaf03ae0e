#pragma once
// How a sparse (top-k) batch reaches the kernel. Every query token becomes a request of its own (query length 1)
// whose KV rows are gathered through kv_indices; how many rows that request holds is the planner's convention.
// A dense plan over that per-token batch is the sparse plan, which is how AITER's and FlashMLA's sparse paths run.
#include <string_view>

#include "mlasim/model/decode_batch.h"

namespace mlasim {

enum class GatheredRows {
  none,       // dense: the batch as it is
  selected,   // AITER, vLLM, ATOM: min(causal position + 1, the request's top-k) rows per token
  full_topk,  // FlashMLA: the request's top-k rows per token whatever its context; rows past the context are
              // -1 sentinels that the kernel masks but still walks
};

std::string_view gathered_rows_name(GatheredRows rows);

// The streams a two-scope (DeepSeek-V4) batch runs as, as a top-k batch of query length 1 whose requests select
// exactly their rows (kv_lens = topk_lens = rows). one_pass: one stream per query token, its window rows and its
// extra rows in one index list. merged: the window stream of each token, then its extra stream when it has extra
// rows; merge_token names each stream's token. FlashMLA (full_topk) walks the window in 64-row blocks, at least
// one, its sentinels masked. Requires b.scopes.on().
DecodeBatch scope_stream_batch(const DecodeBatch& b, GatheredRows rows);

// The per-token batch a sparse batch runs as: Σ qo_lens requests in request order (token t of request r at
// index Σ_{r'<r} qo_lens[r'] + t), query length 1, page size 1, the same shape; topk 0. A two-scope batch runs as
// its streams (scope_stream_batch), one request each. `rows` must not be none.
// Throws InputError like DecodeBatch::validate.
DecodeBatch gathered_batch(const DecodeBatch& sparse, GatheredRows rows);

}  // namespace mlasim
