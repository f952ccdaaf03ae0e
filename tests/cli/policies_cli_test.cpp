// `mlasim policies`: every registered policy and knob, as text and as JSON of the documented structure.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "mlasim/sim/split_policy.h"

namespace {

using mlasim::cli_test::expect_bad_input;
using mlasim::cli_test::run_cli;
namespace sim = mlasim::sim;

TEST(PoliciesCli, TextNamesEveryPolicyAndKnobWithItsDomainAndDefault) {
  const auto r = run_cli("policies");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const sim::PolicyInfo& p : sim::policy_registry()) {
    EXPECT_NE(r.out.find(p.name + " (" + std::string(sim::kernel_kind_name(p.kernel)) + "): " + p.doc + "\n"),
              std::string::npos)
        << p.name;
    for (const sim::KnobInfo& k : p.knobs)
      EXPECT_NE(r.out.find("  " + k.name + "  " + k.domain.describe() + "; default " + k.default_value + "\n      " +
                           k.doc + "\n"),
                std::string::npos)
          << p.name << "." << k.name;
  }
  EXPECT_NE(r.out.find("  max_split_per_batch  -1, vllm or 1..4096; default vllm\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flashinfer-mla (persistent): "), std::string::npos);
  EXPECT_NE(r.out.find("  no knobs\n"), std::string::npos);
  EXPECT_NE(r.out.find("fixed (grid): "), std::string::npos);
}

TEST(PoliciesCli, JsonListsTheRegistryInOrder) {
  const auto r = run_cli("policies --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  const auto& registry = sim::policy_registry();
  ASSERT_EQ(j.size(), registry.size());
  for (size_t i = 0; i < registry.size(); ++i) {
    const sim::PolicyInfo& p = registry[i];
    const auto& jp = j[i];
    EXPECT_EQ(jp.at("name"), p.name);
    EXPECT_EQ(jp.at("kernel"), std::string(sim::kernel_kind_name(p.kernel)));
    EXPECT_EQ(jp.at("doc"), p.doc);
    ASSERT_EQ(jp.at("knobs").size(), p.knobs.size()) << p.name;
    for (size_t k = 0; k < p.knobs.size(); ++k) {
      const auto& jk = jp["knobs"][k];
      EXPECT_EQ(jk.at("name"), p.knobs[k].name);
      EXPECT_EQ(jk.at("domain"), p.knobs[k].domain.describe());
      EXPECT_EQ(jk.at("default"), p.knobs[k].default_value);
      EXPECT_EQ(jk.at("doc"), p.knobs[k].doc);
      EXPECT_EQ(jk.at("alternatives").size(), p.knobs[k].domain.alternatives().size()) << p.knobs[k].name;
    }
  }
}

TEST(PoliciesCli, JsonSpellsOutEachAlternative) {
  const auto j = nlohmann::json::parse(run_cli("policies --format json").out);
  const auto& msb = j[0]["knobs"][0];
  ASSERT_EQ(msb["name"], "max_split_per_batch");
  EXPECT_EQ(msb["alternatives"], nlohmann::json::parse(R"([{"integers": {"min": -1, "max": -1}}, {"word": "vllm"},
                                                           {"integers": {"min": 1, "max": 4096}}])"));
  const auto& adaptive = j[1];
  ASSERT_EQ(adaptive["name"], "aiter-v1-adaptive");
  const auto& coef = adaptive["knobs"][3];
  ASSERT_EQ(coef["name"], "coef");
  EXPECT_EQ(coef["alternatives"], nlohmann::json::parse(R"([{"reals": {"min": 0.01, "max": 100.0}}])"));
  EXPECT_EQ(adaptive["knobs"][2]["alternatives"], nlohmann::json::parse(R"([{"word": "sqrt"}, {"word": "width"}])"));
}

TEST(PoliciesCli, BadFormatIsOneLineAndExitCodeTwo) {
  expect_bad_input("policies --format xml", "format: must be text, json, got 'xml'");
}

}  // namespace
