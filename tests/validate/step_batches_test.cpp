// Each step's own batch (--step-batches): both forms of an entry, the flags' query tokens where an entry gives none,
// the flags' shape kept, and every bad file named by its field.
#include <gtest/gtest.h>

#include <string>

#include "mlasim/model/input_error.h"
#include "mlasim/validate/step_batches.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

DecodeBatch flags() {
  DecodeBatch b = DecodeBatch::uniform(16, 4096, 2);
  b.q_heads = 128;
  b.q_dtype = b.kv_dtype = DType::bf16;
  b.page_size = 64;
  b.kv_granularity = 64;
  return b;
}

TEST(StepBatches, EntriesGiveLengthsAndKeepTheFlagsShape) {
  const StepBatches s = step_batches_from_json(
      R"({"description": "a server's log", "steps": [{"kv_lens": [100, 9000, 4096]},
                                                     {"kv_lens": [300, 40], "qo_lens": [1, 3]},
                                                     {"requests": 4, "context": 2048}]})",
      "b.json", flags());
  EXPECT_EQ(s.origin, "b.json");
  EXPECT_EQ(s.description, "a server's log");
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.steps[0].kv_lens, (std::vector<int>{100, 9000, 4096}));
  EXPECT_EQ(s.steps[0].qo_lens, (std::vector<int>{2, 2, 2}));  // the flags' query tokens per request
  EXPECT_EQ(s.steps[1].qo_lens, (std::vector<int>{1, 3}));
  EXPECT_EQ(s.steps[2].kv_lens, std::vector<int>(4, 2048));
  for (const DecodeBatch& b : s.steps) {
    EXPECT_EQ(b.q_heads, 128);
    EXPECT_EQ(b.q_dtype, DType::bf16);
    EXPECT_EQ(b.page_size, 64);
    EXPECT_EQ(b.kv_granularity, 64);
  }
}

TEST(StepBatches, BadFilesNameTheField) {
  const auto message = [](const std::string& text, const DecodeBatch& f = flags()) {
    const auto e = input_error_of([&] { step_batches_from_json(text, "b.json", f); });
    if (!e) {
      ADD_FAILURE() << text;
      return std::string();
    }
    EXPECT_EQ(e->field(), "step-batches");
    return std::string(e->what());
  };
  EXPECT_NE(message("{").find("b.json: not valid JSON"), std::string::npos);
  EXPECT_NE(message("[]").find("must be an object"), std::string::npos);
  EXPECT_NE(message(R"({"steps": []})").find("steps: must be a non-empty list"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{}]})").find("steps[0]: needs kv_lens, or requests and context"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [0]}]})").find("steps[0].kv_lens"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"kv_lens": []}]})").find("steps[0].kv_lens"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"requests": 2, "context": 8}, {"kv_lens": [5], "context": 5}]})")
                .find("steps[1]: give kv_lens, or requests and context, not both"),
            std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"requests": 2}]})").find("steps[0]: requests and context go together"),
            std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [2, 2], "qo_lens": [1]}]})").find("steps[0].qo_lens"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [2], "qo_lens": [3]}]})").find("steps[0].qo_len"), std::string::npos);
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [2], "contexts": [3]}]})").find("contexts"), std::string::npos);
  EXPECT_NE(message(R"({"batches": []})").find("batches"), std::string::npos);
  // The flags' query tokens differ per request: an entry must give its own.
  DecodeBatch ragged_qo = flags();
  ragged_qo.qo_lens[0] = 1;
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [9]}]})", ragged_qo).find("steps[0].qo_lens: is needed"),
            std::string::npos);
  // Sparse and two-scope batches take their rows per request from the flags.
  DecodeBatch sparse = flags();
  sparse.topk = 2048;
  sparse.page_size = 1;
  EXPECT_NE(message(R"({"steps": [{"kv_lens": [9]}]})", sparse).find("dense"), std::string::npos);
  EXPECT_THROW(load_step_batches("/nonexistent/step_batches.json", flags()), InputError);
}

// The trace's count of steps and the file's total of requests are checked before any entry is expanded, so a small
// file cannot ask for gigabytes of lengths.
TEST(StepBatches, ACountOtherThanTheTracesOrTooManyRequestsIsRefusedFirst) {
  const std::string two = R"({"steps": [{"requests": 4, "context": 8}, {"requests": 4, "context": 8}]})";
  EXPECT_EQ(step_batches_from_json(two, "b.json", flags(), 2).steps.size(), 2u);
  const auto e = input_error_of([&] { step_batches_from_json(two, "b.json", flags(), 3); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            "step-batches: b.json: steps: 2 entries, where the trace has 3 steps (one entry per step, in order, the "
            "skipped ones included)");
  std::string many = R"({"steps": [)";
  for (int i = 0; i < 65; ++i) many += std::string(i ? ", " : "") + R"({"requests": 65536, "context": 1})";
  many += "]}";
  const auto big = input_error_of([&] { step_batches_from_json(many, "b.json", flags()); });
  ASSERT_TRUE(big);
  EXPECT_NE(std::string(big->what()).find("steps: ask for more than 4194304 requests over the file"), std::string::npos)
      << big->what();
  // An entry's query lengths are named as its list.
  const auto qo = input_error_of(
      [&] { step_batches_from_json(R"({"steps": [{"kv_lens": [2], "qo_lens": [3]}]})", "b.json", flags()); });
  ASSERT_TRUE(qo);
  EXPECT_NE(std::string(qo->what()).find("steps[0].qo_lens: must not exceed"), std::string::npos) << qo->what();
}

}  // namespace
}  // namespace mlasim::validate
