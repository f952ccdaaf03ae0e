// DeepSeek-V4's two scopes: the rows each scope gives a token, the streams a batch runs as (one pass or merged),
// and the checks on the fields.
#include <gtest/gtest.h>

#include "mlasim/model/decode_batch.h"
#include "mlasim/model/gathered_rows.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/two_scopes.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

DecodeBatch scoped(std::vector<int> kv_lens, int qlen, TwoScopes scopes) {
  DecodeBatch b;
  b.kv_lens = std::move(kv_lens);
  b.qo_lens.assign(b.kv_lens.size(), qlen);
  b.scopes = scopes;
  return b;
}

std::string field_of(const DecodeBatch& b) {
  const auto e = input_error_of([&] { b.validate(); });
  return e ? e->field() : "";
}

TEST(TwoScopes, RowsOfEachScopeFollowThePosition) {
  const TwoScopes csa = TwoScopes::preset("csa");
  EXPECT_EQ(csa.window, 128);
  EXPECT_EQ(csa.window_rows(0), 1);
  EXPECT_EQ(csa.window_rows(127), 128);
  EXPECT_EQ(csa.window_rows(5000), 128);
  // One compressed row per 4 tokens seen, at most the indexer's 1024.
  EXPECT_EQ(csa.extra_rows(2), 0);
  EXPECT_EQ(csa.extra_rows(3), 1);
  EXPECT_EQ(csa.extra_rows(99), 25);
  EXPECT_EQ(csa.extra_rows(4095), 1024);
  EXPECT_EQ(csa.extra_rows(99999), 1024);
  const TwoScopes hca = TwoScopes::preset("hca");
  EXPECT_EQ(hca.extra_rows(126), 0);
  EXPECT_EQ(hca.extra_rows(127), 1);
  EXPECT_EQ(hca.extra_rows(99999), 781);  // every committed row: no top-k
  EXPECT_EQ(TwoScopes::preset("swa").extra_rows(99999), 0);
  EXPECT_THROW(TwoScopes::preset("mla"), InputError);
}

TEST(TwoScopes, OnePassRunsOneStreamPerTokenWithBothScopesRows) {
  // Two tokens of a 1000-token request (positions 998 and 999) and one of a 2-token request (position 1).
  const DecodeBatch b = scoped({1000, 2}, 1, TwoScopes::preset("csa"));
  DecodeBatch two = b;
  two.qo_lens = {2, 1};
  const DecodeBatch s = scope_stream_batch(two, GatheredRows::selected);
  EXPECT_EQ(s.kv_lens, (std::vector<int>{128 + 249, 128 + 250, 2}));
  EXPECT_EQ(s.topk_lens, s.kv_lens);
  EXPECT_EQ(s.topk, 378);
  EXPECT_EQ(s.qo_lens, std::vector<int>(3, 1));
  EXPECT_TRUE(s.merge_token.empty());
  EXPECT_FALSE(s.scopes.on());
  // The gathered batch of a two-scope batch is its streams' own.
  EXPECT_EQ(gathered_batch(two, GatheredRows::selected).kv_lens, s.kv_lens);
}

TEST(TwoScopes, MergedRunsAStreamPerScopeAndNamesEachStreamsToken) {
  TwoScopes csa = TwoScopes::preset("csa");
  csa.run = TwoScopes::Run::merged;
  // Token 0 at position 999 has both scopes; token 1 at position 1 has no compressed row yet.
  const DecodeBatch s = scope_stream_batch(scoped({1000, 2}, 1, csa), GatheredRows::selected);
  EXPECT_EQ(s.kv_lens, (std::vector<int>{128, 250, 2}));
  EXPECT_EQ(s.merge_token, (std::vector<int>{0, 0, 1}));
  const DecodeBatch g = gathered_batch(scoped({1000, 2}, 1, csa), GatheredRows::selected);
  EXPECT_EQ(g.kv_lens, s.kv_lens);
  EXPECT_EQ(g.merge_token, s.merge_token);  // the kernel batch keeps the merge for the simulator
}

TEST(TwoScopes, FlashMlaWalksTheWindowInWholeBlocksOfSixtyFour) {
  TwoScopes swa = TwoScopes::preset("swa");
  swa.window = 100;
  const DecodeBatch b = scoped({10, 5000}, 1, swa);
  EXPECT_EQ(scope_stream_batch(b, GatheredRows::selected).kv_lens, (std::vector<int>{10, 100}));
  EXPECT_EQ(scope_stream_batch(b, GatheredRows::full_topk).kv_lens, (std::vector<int>{64, 128}));
}

TEST(TwoScopes, BadFieldsAreNamed) {
  TwoScopes s = TwoScopes::preset("csa");
  s.compress_ratio = 1;
  EXPECT_EQ(field_of(scoped({100}, 1, s)), "compress_ratio");
  s = TwoScopes::preset("swa");
  s.extra_topk = 64;
  EXPECT_EQ(field_of(scoped({100}, 1, s)), "extra_topk");
  s = {};
  s.compress_ratio = 4;
  EXPECT_EQ(field_of(scoped({100}, 1, s)), "window");
  DecodeBatch with_topk = scoped({100}, 1, TwoScopes::preset("hca"));
  with_topk.topk = 2048;
  EXPECT_EQ(field_of(with_topk), "topk");
  DecodeBatch paged = scoped({100}, 1, TwoScopes::preset("hca"));
  paged.page_size = 64;
  EXPECT_EQ(field_of(paged), "page_size");
  DecodeBatch merge = DecodeBatch::uniform(3, 10);
  merge.merge_token = {0, 2, 2};
  EXPECT_EQ(field_of(merge), "merge_token");
  merge.merge_token = {0, 0, 1};
  EXPECT_EQ(field_of(merge), "");
  EXPECT_THROW(parse_scope_run("twice", "scope-run"), InputError);
  EXPECT_EQ(describe_scopes(TwoScopes::preset("csa")), "window 128 + compressed 1/4 (top 1024), one pass");
}

}  // namespace
}  // namespace mlasim
