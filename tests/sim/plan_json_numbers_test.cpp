// Numbers in plan JSON and reference cases that do not fit the fields they fill are InputErrors, not undefined
// behaviour or silent wrap-around (found by fuzz/plan_cases_fuzz; docs/reliability.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/plan_json.h"

namespace mlasim::sim {
namespace {

nlohmann::json inputs() {
  return nlohmann::json::parse(
      R"({"arch": "gfx942", "num_cu": 80, "q_dtype": "fp8", "num_heads_per_head_k": 16, "seqlens_kv": [8192]})");
}

TEST(PlanJsonNumbers, AFloatFarOutsideIntIsAnInputError) {
  nlohmann::json in = inputs();
  in["page_size"] = 1.1e88;  // the fuzzer's input: converting it to int was undefined behaviour
  EXPECT_THROW(aiter_args_from_json(in), InputError);
}

TEST(PlanJsonNumbers, AnIntegerOutsideIntIsAnInputError) {
  nlohmann::json in = inputs();
  in["num_cu"] = int64_t{10000000000};
  EXPECT_THROW(aiter_args_from_json(in), InputError);
  in = inputs();
  in["seqlens_kv"] = {uint64_t{18000000000000000000u}};
  EXPECT_THROW(aiter_args_from_json(in), InputError);
}

TEST(PlanJsonNumbers, PagesBeyondInt32AreAnInputError) {
  nlohmann::json in = inputs();
  in["seqlens_kv"] = {2000000000, 2000000000};
  EXPECT_THROW(aiter_args_from_json(in), InputError);
}

TEST(PlanJsonNumbers, AWholeCaseStillReads) {
  const AiterV1Args a = aiter_args_from_json(inputs());
  EXPECT_EQ(a.num_cu, 80);
  EXPECT_EQ(a.seqlens_kv_indptr, (std::vector<int32_t>{0, 8192}));
}

TEST(PlanJsonNumbers, APlanEntryOutsideInt32IsAnInputError) {
  const auto plan = nlohmann::json::parse(R"({"work_indptr": [0, 4294967296], "work_info_set": []})");
  EXPECT_THROW(plan_from_json(plan), InputError);
}

}  // namespace
}  // namespace mlasim::sim
