// Workloads and scenario files: JSON round trips, seeded random batches, errors that name the field, and every
// example scenario planning on both of its policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/scenario.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using nlohmann::json;

std::string message_of(const json& j) {
  const auto e = input_error_of([&] { scenario_from_json(j); });
  return e ? e->what() : std::string();
}

std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "mlasim_scenario_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Scenario, TheReadmeScenarioReadsAsDocumented) {
  const Scenario s = load_scenario(MLASIM_DATA_DIR "/scenarios/atom_msb16_vs_auto.json");
  EXPECT_EQ(s.workload.gpu, "mi355x");
  EXPECT_EQ(s.workload.batch.lengths(), std::vector<int>(4, 100000));
  EXPECT_EQ(s.workload.heads, 16);
  EXPECT_EQ(s.workload.q_dtype, DType::fp8);
  EXPECT_EQ(s.workload.kv_dtype, DType::fp8);
  EXPECT_EQ(s.spec("A", 0), "aiter-v1:max_split_per_batch=16");
  EXPECT_EQ(s.spec("B", 1), "aiter-v1:max_split_per_batch=-1");
}

class ScenarioRoundTrip : public ::testing::TestWithParam<int> {};

TEST_P(ScenarioRoundTrip, JsonAndFileRoundTripsAreExact) {
  const int kind = GetParam();
  Scenario s;
  s.name = "round trip";
  s.workload.gpu = "mi300x";
  s.workload.heads = 128;
  s.workload.qlen = 2;
  s.workload.page_size = 64;
  s.workload.clusters = 200;
  s.workload.kv_dtype = DType::bf16;
  s.policies = {{"A", "aiter-v1-adaptive:rule=width"}, {"B", "aiter-v1:max_split_per_batch=8"}};
  if (kind == 1) {
    s.workload.batch = BatchSpec::list({100000, 2000, 500});
    s.workload.qo_lens = {1, 2, 4};
    s.workload.kv_granularity = 32;
    s.workload.causal = false;
    s.workload.kv_heads = 2;
    s.workload.topk = 2048;
    s.workload.topk_lens = {2048, 1024, 1};
  } else if (kind >= 2) {
    s.workload.batch.kind = BatchSpec::Kind::random;
    s.workload.batch.count = 64;
    s.workload.batch.seed = 7;
    if (kind == 3) {
      s.workload.batch.distribution = BatchSpec::Distribution::lognormal;
      s.workload.batch.median_context = 4000;
      s.workload.batch.sigma = 0.75;
    }
  }
  EXPECT_EQ(scenario_to_json(scenario_from_json(scenario_to_json(s))), scenario_to_json(s));
  EXPECT_EQ(scenario_from_json(scenario_to_json(s)), s);
  const std::string path = temp_file("round_trip_" + std::to_string(kind) + ".json");
  save_scenario(s, path);
  EXPECT_EQ(load_scenario(path), s);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ScenarioRoundTrip, ::testing::Values(0, 1, 2, 3));

TEST(Scenario, ASeedFixesTheLengths) {
  BatchSpec b;
  b.kind = BatchSpec::Kind::random;
  b.count = 1000;
  b.min_context = 100;
  b.max_context = 5000;
  const std::vector<int> first = b.lengths();
  EXPECT_EQ(b.lengths(), first);
  EXPECT_GE(*std::min_element(first.begin(), first.end()), 100);
  EXPECT_LE(*std::max_element(first.begin(), first.end()), 5000);
  b.seed = 2;
  EXPECT_NE(b.lengths(), first);
}

TEST(Scenario, LognormalLengthsCentreOnTheMedian) {
  BatchSpec b;
  b.kind = BatchSpec::Kind::random;
  b.distribution = BatchSpec::Distribution::lognormal;
  b.count = 4001;
  b.min_context = 1;
  b.max_context = 1 << 30;
  b.median_context = 8000;
  b.sigma = 1.0;
  std::vector<int> lens = b.lengths();
  std::nth_element(lens.begin(), lens.begin() + 2000, lens.end());
  EXPECT_GT(lens[2000], 7000);
  EXPECT_LT(lens[2000], 9000);
}

struct BadScenario {
  const char* text;
  const char* expected;  // the message starts with this
};

class ScenarioErrors : public ::testing::TestWithParam<BadScenario> {};

TEST_P(ScenarioErrors, NameTheField) {
  const std::string message = message_of(json::parse(GetParam().text));
  EXPECT_EQ(message.rfind(GetParam().expected, 0), 0u) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ScenarioErrors,
    ::testing::Values(
        BadScenario{R"({"derived": {}, "workload": {}, "policies": {"A": "x", "B": "y"}})",
                    "derived: is not a scenario field here"},
        BadScenario{R"({"policies": {"A": "aiter-v1", "B": "aiter-v1"}})", "workload: is missing"},
        BadScenario{R"({"workload": {}})", "policies: is missing"},
        BadScenario{R"({"workload": {}, "policies": {"A": "", "B": "aiter-v1"}})", "policies.A: must be a policy spec"},
        BadScenario{R"({"workload": {}, "policies": {}})", "policies: must be an object of 1..64 named policy specs"},
        BadScenario{R"({"workload": {"batch": {"kind": "uniform", "count": 0}}, "policies": {"A": "a", "B": "b"}})",
                    "workload.batch.count: must be 1..65536, got 0"},
        BadScenario{R"({"workload": {"batch": {"kind": "zipf"}}, "policies": {"A": "a", "B": "b"}})",
                    "workload.batch.kind: must be uniform, list or random, got 'zipf'"},
        BadScenario{R"({"workload": {"batch": {"kind": "list", "kv_lens": [5], "count": 3}}, "policies": {"A": "a"}})",
                    "workload.batch.count: is not a scenario field here"},
        BadScenario{R"({"workload": {"batch": {"kind": "list", "kv_lens": [5, -1]}}, "policies": {"A": "a"}})",
                    "workload.batch.kv_lens: entry 1 must be an integer"},
        BadScenario{
            R"({"workload": {"batch": {"kind": "random", "min_context": 10, "max_context": 5}}, "policies": {"A": "a"}})",
            "workload.batch.max_context: must be >= min_context (10), got 5"},
        // scenario_fuzz: a uniform draw took a lognormal median it then did not write (no round trip).
        BadScenario{R"({"workload": {"batch": {"kind": "random", "median_context": 4096}}, "policies": {"A": "a"}})",
                    "workload.batch.median_context: applies to distribution lognormal only"},
        BadScenario{R"({"workload": {"topk": -1}, "policies": {"A": "a"}})", "workload.topk: must be 0..1048576"},
        BadScenario{R"({"workload": {"heads": "16"}, "policies": {"A": "a", "B": "b"}})",
                    "workload.heads: must be an integer"},
        BadScenario{R"({"workload": {"kv_dtype": "fp4"}, "policies": {"A": "a", "B": "b"}})", "workload.kv_dtype"},
        BadScenario{R"({"workload": {"causal": 1}, "policies": {"A": "a"}})", "workload.causal: must be true or false"},
        BadScenario{R"({"workload": {"kv_granularity": 0}, "policies": {"A": "a"}})",
                    "workload.kv_granularity: must be 1..65536"},
        BadScenario{"[1, 2]", "scenario: must be a JSON object"}));

TEST(Scenario, AFileThatIsNotJsonNamesTheFile) {
  const std::string path = temp_file("not_json.json");
  std::ofstream(path) << "{\"workload\": ";
  const auto e = input_error_of([&] { load_scenario(path); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(std::string(e->what()).rfind("scenario: " + path + ": not valid JSON", 0), 0u) << e->what();
  std::filesystem::remove(path);
}

TEST(Scenario, AMissingFileIsAnInputError) { EXPECT_THROW(load_scenario("/nonexistent/scenario.json"), InputError); }

TEST(Scenario, SavingWhereItCannotLeavesNoFile) {
  EXPECT_THROW(save_scenario(Scenario{}, "/nonexistent/dir/s.json"), InputError);
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/dir/s.json"));
}

TEST(Scenario, SpecFallsBackToThePosition) {
  Scenario s;
  s.policies = {{"fast", "flashmla"}, {"slow", "fixed:splits=1"}};
  EXPECT_EQ(s.spec("A", 0), "flashmla");
  EXPECT_EQ(s.spec("B", 1), "fixed:splits=1");
  EXPECT_EQ(s.spec("slow", 0), "fixed:splits=1");
  s.policies.resize(1);
  EXPECT_EQ(s.spec("B", 1), "flashmla");
}

TEST(Workload, QoLensMustMatchTheRequests) {
  Workload w;
  w.qo_lens = {1, 2};
  const auto e = input_error_of([&] { w.make_batch(); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(e->field(), "qo_lens");
  w.qo_lens = {1, 2, 3, 4};
  EXPECT_EQ(w.make_batch().qo_lens, (std::vector<int>{1, 2, 3, 4}));
}

TEST(Workload, GranularityDefaultsToMaxOfPageAnd16) {
  Workload w;
  w.page_size = 64;
  EXPECT_EQ(w.make_batch().kv_granularity, 64);
  w.page_size = 1;
  EXPECT_EQ(w.make_batch().kv_granularity, 16);
  w.kv_granularity = 4;
  EXPECT_EQ(w.make_batch().kv_granularity, 4);
}

TEST(Workload, ContextLabel) {
  EXPECT_EQ(context_label({5, 5, 5}), "5");
  EXPECT_EQ(context_label({5, 6}), "ragged");
  EXPECT_EQ(context_label({}), "ragged");
}

// Every example in data/scenarios reads, and each of its policies plans and simulates on its workload.
TEST(Scenario, EveryExampleScenarioPlans) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(MLASIM_DATA_DIR "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const Scenario s = load_scenario(entry.path().string());
    EXPECT_FALSE(s.name.empty()) << entry.path();
    EXPECT_FALSE(s.description.empty()) << entry.path();
    const WorkloadContext ctx = resolve(s.workload);
    for (const NamedPolicy& p : s.policies)
      EXPECT_GT(evaluate(p.spec, ctx).prediction->metrics.kernel_us, 0) << entry.path() << " " << p.name;
  }
  EXPECT_GE(files, 3);
}

TEST(Evaluation, ClustersAdmitZeroAndNameTheRange) {
  Workload w;
  w.clusters = 999;
  const auto e = input_error_of([&] { resolve(w); });
  ASSERT_TRUE(e) << "no error";
  EXPECT_EQ(std::string(e->what()), "clusters: must be 0 (all) or 1..256 on mi355x, got 999");
  w.clusters = 0;
  EXPECT_EQ(resolve(w).clusters, 0);
}

}  // namespace
}  // namespace mlasim::sim
