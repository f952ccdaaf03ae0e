#include "mlasim/model/decode_batch.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "mlasim/model/input_error.h"

namespace mlasim {

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int DecodeBatch::max_qo_len() const { return qo_lens.empty() ? 0 : *std::max_element(qo_lens.begin(), qo_lens.end()); }

int DecodeBatch::uniform_qo_len() const {
  if (qo_lens.empty()) return -1;
  const int first = qo_lens.front();
  return std::all_of(qo_lens.begin(), qo_lens.end(), [&](int q) { return q == first; }) ? first : -1;
}

int64_t DecodeBatch::total_kv_tokens() const { return std::accumulate(kv_lens.begin(), kv_lens.end(), int64_t{0}); }

int64_t DecodeBatch::total_qo_tokens() const { return std::accumulate(qo_lens.begin(), qo_lens.end(), int64_t{0}); }

std::vector<DecodeBatch::MergedToken> DecodeBatch::merged_tokens() const {
  std::vector<MergedToken> tokens;
  for (size_t r = 0; r < merge_token.size();) {
    size_t e = r + 1;
    while (e < merge_token.size() && merge_token[e] == merge_token[r]) ++e;
    if (e - r > 1) tokens.push_back({static_cast<int>(r), static_cast<int>(e - r)});
    r = e;
  }
  return tokens;
}

void DecodeBatch::validate() const {
  if (kv_lens.empty()) throw InputError("batch", "the batch is empty; give at least one request");
  if (qo_lens.size() != kv_lens.size())
    throw InputError("qo_lens", "has " + std::to_string(qo_lens.size()) + " entries but the batch has " +
                                    std::to_string(kv_lens.size()) + " requests");
  for (size_t i = 0; i < kv_lens.size(); ++i) {
    if (kv_lens[i] <= 0)
      throw InputError("kv_lens",
                       "must be >= 1 token, got " + std::to_string(kv_lens[i]) + " for request " + std::to_string(i));
    if (qo_lens[i] <= 0)
      throw InputError("qo_len",
                       "must be >= 1 token, got " + std::to_string(qo_lens[i]) + " for request " + std::to_string(i));
    if (qo_lens[i] > kv_lens[i])
      throw InputError("qo_len", "must not exceed the request's KV length (" + std::to_string(kv_lens[i]) + "), got " +
                                     std::to_string(qo_lens[i]) + " for request " + std::to_string(i));
  }
  if (total_kv_tokens() > int64_t{2000000000})
    throw InputError("kv_lens", "total KV tokens must stay below 2e9 (int32 page indices), got " +
                                    std::to_string(total_kv_tokens()));
  if (q_heads <= 0 || q_heads % 8 != 0)
    throw InputError("heads", "must be a positive multiple of 8, got " + std::to_string(q_heads));
  if (kv_heads != 1) throw InputError("kv_heads", "MLA decode supports 1 kv head, got " + std::to_string(kv_heads));
  if (!is_power_of_two(page_size))
    throw InputError("page_size", "must be a power of two (1, 2, 4, ... 1024), got " + std::to_string(page_size));
  if (!is_power_of_two(kv_granularity))
    throw InputError("kv_granularity",
                     "must be a power of two (16, 32, 64, ...), got " + std::to_string(kv_granularity));
  if (topk < 0 || topk > kMaxTopk)
    throw InputError("topk", "must be 0 (dense) or 1.." + std::to_string(kMaxTopk) + " rows per query token, got " +
                                 std::to_string(topk));
  if (!topk_lens.empty()) {
    if (topk == 0)
      throw InputError("topk_lens", "needs a top-k (topk >= 1): per-request lengths are for sparse decode");
    if (topk_lens.size() != kv_lens.size())
      throw InputError("topk_lens", "has " + std::to_string(topk_lens.size()) + " entries but the batch has " +
                                        std::to_string(kv_lens.size()) + " requests");
    for (size_t i = 0; i < topk_lens.size(); ++i)
      if (topk_lens[i] < 1 || topk_lens[i] > topk)
        throw InputError("topk_lens", "must be 1.." + std::to_string(topk) + " (the top-k), got " +
                                          std::to_string(topk_lens[i]) + " for request " + std::to_string(i));
  }
  if (topk > 0 && page_size != 1)
    throw InputError("page_size", "sparse (top-k) decode gathers single KV rows: page size must be 1, got " +
                                      std::to_string(page_size));
  scopes.validate();
  if (scopes.on() && topk > 0)
    throw InputError("topk",
                     "a two-scope (DeepSeek-V4) batch selects its rows by window and compressed scope; give "
                     "no top-k, got " +
                         std::to_string(topk));
  if (scopes.on() && page_size != 1)
    throw InputError("page_size", "two-scope (DeepSeek-V4) decode gathers single KV rows: page size must be 1, got " +
                                      std::to_string(page_size));
  if (!merge_token.empty()) {
    if (merge_token.size() != kv_lens.size())
      throw InputError("merge_token", "has " + std::to_string(merge_token.size()) + " entries but the batch has " +
                                          std::to_string(kv_lens.size()) + " requests");
    for (size_t i = 0; i < merge_token.size(); ++i) {
      const int previous = i == 0 ? 0 : merge_token[i - 1];
      if (merge_token[i] < previous || merge_token[i] > previous + 1 || (i == 0 && merge_token[i] != 0))
        throw InputError("merge_token", "must count query tokens up from 0 in request order, got " +
                                            std::to_string(merge_token[i]) + " for request " + std::to_string(i));
      if (qo_lens[i] != 1)
        throw InputError("merge_token", "streams are single query tokens, request " + std::to_string(i) + " has " +
                                            std::to_string(qo_lens[i]));
    }
  }
}

DecodeBatch DecodeBatch::uniform(int batch, int context, int qo_len) {
  DecodeBatch b;
  b.kv_lens.assign(static_cast<size_t>(std::max(batch, 0)), context);
  b.qo_lens.assign(static_cast<size_t>(std::max(batch, 0)), qo_len);
  return b;
}

}  // namespace mlasim
