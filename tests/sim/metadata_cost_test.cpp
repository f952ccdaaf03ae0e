// The planner cost model (metadata_cost.h): the committed file reads, reproduces the published row it was taken
// from, and a malformed file names the field.
#include "mlasim/sim/metadata_cost.h"

#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;

TEST(MetadataCost, TheCommittedModelReproducesThePublishedRow) {
  const MetadataCostModel m = load_metadata_cost();
  EXPECT_EQ(m.names(), (std::vector<std::string>{"device-parallel", "device-serial", "host"}));
  // ROCm/aiter #3465: MI355X, batch 4 x 2048 tokens, 60 works: 37.352 us serial, 3.649 us parallel.
  // The row's batch as vLLM's ROCm backend plans it: 16 heads, page size 1, a split cap of 16.
  Workload w;
  w.gpu = "mi355x";
  w.batch = BatchSpec::uniform(4, 2048);
  w.page_size = 1;
  const Evaluation e = evaluate("aiter-v1:max_split_per_batch=16", resolve(w));
  ASSERT_EQ(e.plan->num_works(), 60);
  ASSERT_EQ(e.plan->num_tiles(), 4);
  EXPECT_NEAR(metadata_us(m.at("device-serial"), *e.plan), 37.352, 0.01);
  EXPECT_NEAR(metadata_us(m.at("device-parallel"), *e.plan), 3.649, 1e-9);
  // Every implementation costs more for a larger plan, or as much.
  w.batch = BatchSpec::uniform(256, 8192);
  const Evaluation big = evaluate("aiter-v1", resolve(w));
  for (const auto& impl : m.implementations) {
    EXPECT_GE(metadata_us(impl, *big.plan), metadata_us(impl, *e.plan)) << impl.name;
    EXPECT_FALSE(impl.source.empty()) << impl.name;
  }
  EXPECT_THROW(m.at("gpu-magic"), InputError);
}

TEST(MetadataCost, MalformedFilesNameTheField) {
  const auto field_of = [](const char* text) {
    const auto e = input_error_of([&] { metadata_cost_from_json(nlohmann::json::parse(text)); });
    return e ? std::string(e->what()) : std::string("no error");
  };
  EXPECT_NE(field_of(R"({"implementations": {"host": {"fixed_us": -1}}})").find("implementations.host.fixed_us"),
            std::string::npos);
  EXPECT_NE(field_of(R"({"implementations": {"host": {"per_item": 1}}})").find("per_item"), std::string::npos);
  EXPECT_NE(field_of(R"({"implementations": {}})").find("implementations"), std::string::npos);
  EXPECT_NE(field_of(R"([1])").find("object"), std::string::npos);
}

}  // namespace
}  // namespace mlasim::sim
