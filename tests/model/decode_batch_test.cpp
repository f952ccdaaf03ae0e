#include <gtest/gtest.h>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

std::string error_of(const DecodeBatch& b) {
  const auto e = input_error_of([&] { b.validate(); });
  return e ? e->what() : "no error";
}

TEST(DecodeBatch, PagesAndLastPageLength) {
  DecodeBatch b = DecodeBatch::uniform(1, 100);
  b.page_size = 16;
  EXPECT_EQ(b.pages(0), 7);
  EXPECT_EQ(b.last_page_len(0), 4);
}

TEST(DecodeBatch, UniformQueryLength) {
  DecodeBatch b = DecodeBatch::uniform(3, 10, 2);
  EXPECT_EQ(b.uniform_qo_len(), 2);
  b.qo_lens[1] = 3;
  EXPECT_EQ(b.uniform_qo_len(), -1);
  EXPECT_EQ(b.max_qo_len(), 3);
}

TEST(DecodeBatch, RejectsBadFields) {
  EXPECT_EQ(error_of(DecodeBatch::uniform(0, 10)), "batch: the batch is empty; give at least one request");
  EXPECT_EQ(error_of(DecodeBatch::uniform(1, 0)), "kv_lens: must be >= 1 token, got 0 for request 0");
  DecodeBatch b = DecodeBatch::uniform(1, 10);
  b.q_heads = 12;
  EXPECT_EQ(error_of(b), "heads: must be a positive multiple of 8, got 12");
  b = DecodeBatch::uniform(1, 10);
  b.page_size = 12;
  EXPECT_EQ(error_of(b), "page_size: must be a power of two (1, 2, 4, ... 1024), got 12");
  b = DecodeBatch::uniform(1, 2, 4);
  EXPECT_EQ(error_of(b), "qo_len: must not exceed the request's KV length (2), got 4 for request 0");
}

TEST(DecodeBatch, MergedTokensAreTheTokensOfMoreThanOneStream) {
  DecodeBatch b = DecodeBatch::uniform(6, 10);
  EXPECT_TRUE(b.merged_tokens().empty());  // no merge_token: not a merged two-scope run
  b.merge_token = {0, 1, 1, 2, 3, 3};
  const auto tokens = b.merged_tokens();
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].first, 1);
  EXPECT_EQ(tokens[0].streams, 2);
  EXPECT_EQ(tokens[1].first, 4);
  EXPECT_EQ(tokens[1].streams, 2);
  b.merge_token = {0, 1, 2, 3, 4, 5};  // one stream per token: nothing to merge
  EXPECT_TRUE(b.merged_tokens().empty());
}

}  // namespace
}  // namespace mlasim
