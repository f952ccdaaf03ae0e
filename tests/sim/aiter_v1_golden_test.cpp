// Exactness: the v1.2 planner against AITER's own outputs, array for array.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/sim/aiter_v1_planner.h"
#include "mlasim/sim/plan_json.h"

namespace mlasim::sim {
namespace {

std::vector<nlohmann::json> load_cases() {
  std::vector<nlohmann::json> cases;
  std::ifstream in(MLASIM_TEST_DATA_DIR "/aiter_v1_golden_sample.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) cases.push_back(nlohmann::json::parse(line));
  return cases;
}

TEST(AiterV1Golden, EveryCaseMatchesEveryArray) {
  const auto cases = load_cases();
  ASSERT_EQ(cases.size(), 226u);
  int checked = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["id"].get<std::string>());
    const nlohmann::json got = plan_to_json(plan_aiter_v1(aiter_args_from_json(c["inputs"])));
    for (const char* section : {"derived", "model", "buffer_sizes"}) EXPECT_EQ(got[section], c[section]) << section;
    for (const auto& [key, value] : c["outputs"].items()) EXPECT_EQ(got["outputs"][key], value) << key;
    ++checked;
  }
  EXPECT_EQ(checked, 226);
}

TEST(AiterV1Golden, PlanJsonRoundTripKeepsEveryArray) {
  const auto cases = load_cases();
  for (size_t i = 0; i < cases.size(); i += 7) {
    const Plan plan = plan_aiter_v1(aiter_args_from_json(cases[i]["inputs"]));
    const Plan back = plan_from_json(plan_to_json(plan));
    EXPECT_EQ(back.work_indptr, plan.work_indptr);
    EXPECT_EQ(back.works, plan.works);
    EXPECT_EQ(back.reduce_indptr, plan.reduce_indptr);
    EXPECT_EQ(back.reduce_final_map, plan.reduce_final_map);
    EXPECT_EQ(back.reduce_partial_map, plan.reduce_partial_map);
    EXPECT_EQ(back.num_work_lists(), plan.num_work_lists());
  }
}

}  // namespace
}  // namespace mlasim::sim
