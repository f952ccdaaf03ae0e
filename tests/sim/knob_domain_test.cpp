// Knob domains as data: what they accept, how they describe themselves, and the typed values policies read.
#include "mlasim/sim/knob_domain.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/policy_knobs.h"
#include "mlasim/sim/split_policy.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using D = KnobDomain;

const KnobDomain& msb_domain() {
  static const KnobDomain d{D::integer(-1), D::word("vllm"), D::integers(1, 4096)};
  return d;
}

std::string error_of(const std::vector<KnobInfo>& knobs, const std::string& spec) {
  const auto e = input_error_of([&] { KnobValues(knobs, parse_policy_spec(spec)); });
  return e ? e->what() : "no error";
}

TEST(KnobDomain, DescribesItsAlternativesInOrder) {
  EXPECT_EQ(msb_domain().describe(), "-1, vllm or 1..4096");
  EXPECT_EQ(KnobDomain({D::word("sqrt"), D::word("width")}).describe(), "sqrt or width");
  EXPECT_EQ(KnobDomain({D::integers(1, 1024)}).describe(), "1..1024");
  EXPECT_EQ(KnobDomain({D::reals(0.01, 100)}).describe(), "0.01..100");
  EXPECT_EQ(KnobDomain({D::word("auto"), D::integer(64), D::integer(128)}).describe(), "auto, 64 or 128");
}

TEST(KnobDomain, AnIntegerBetweenTwoAlternativesIsOutside) {
  EXPECT_EQ(msb_domain().parse("-1"), KnobValue{int64_t{-1}});
  EXPECT_EQ(msb_domain().parse("4096"), KnobValue{int64_t{4096}});
  EXPECT_EQ(msb_domain().parse("vllm"), KnobValue{std::string("vllm")});
  EXPECT_FALSE(msb_domain().parse("0"));
  EXPECT_FALSE(msb_domain().parse("-2"));
  EXPECT_FALSE(msb_domain().parse("4097"));
}

TEST(KnobDomain, NumbersMustBeWrittenWhole) {
  EXPECT_FALSE(msb_domain().parse("16x"));
  EXPECT_FALSE(msb_domain().parse("1.5"));
  EXPECT_FALSE(msb_domain().parse(""));
  EXPECT_FALSE(msb_domain().parse("VLLM"));
  const KnobDomain coef{D::reals(0.01, 100)};
  EXPECT_EQ(coef.parse("1.5"), KnobValue{1.5});
  EXPECT_EQ(coef.parse("2"), KnobValue{2.0});
  EXPECT_FALSE(coef.parse("nan"));
  EXPECT_FALSE(coef.parse("0.001"));
}

TEST(KnobDomain, KnowsWhetherItsValuesCanBeListed) {
  EXPECT_TRUE(KnobDomain({D::word("auto"), D::integer(64), D::integer(128)}).is_finite());
  EXPECT_FALSE(msb_domain().is_finite());
  EXPECT_EQ(msb_domain().sole_range(), nullptr);
  const KnobDomain splits{D::integers(1, 1024)};
  ASSERT_NE(splits.sole_range(), nullptr);
  EXPECT_EQ(splits.sole_range()->max, 1024);
}

TEST(KnobValues, TheCheckAndItsMessageComeFromTheDomain) {
  const std::vector<KnobInfo> knobs = {{"max_split_per_batch", msb_domain(), "vllm", ""},
                                       {"coef", {D::reals(0.01, 100)}, "1.2", ""}};
  EXPECT_EQ(error_of(knobs, "p:max_split_per_batch=0"), "max_split_per_batch: must be -1, vllm or 1..4096, got 0");
  EXPECT_EQ(error_of(knobs, "p:coef=200"), "coef: must be 0.01..100, got 200");
  EXPECT_EQ(error_of(knobs, "p:splits=4"), "policy: 'p' has no knob 'splits'; knobs: max_split_per_batch, coef");
  EXPECT_EQ(error_of(knobs, "p:max_split_per_batch=-1,coef=0.5"), "no error");
}

TEST(KnobValues, DerivedWordsReadAsNulloptAndNumbersAsTheirType) {
  const std::vector<KnobInfo> knobs = {{"max_split_per_batch", msb_domain(), "vllm", ""},
                                       {"rule", {D::word("sqrt"), D::word("width")}, "sqrt", ""},
                                       {"coef", {D::reals(0.01, 100)}, "1.2", ""}};
  const KnobValues defaults(knobs, parse_policy_spec("p"));
  EXPECT_EQ(defaults.integer_or_derived<int>("max_split_per_batch"), std::nullopt);
  EXPECT_EQ(defaults.word("rule"), "sqrt");
  EXPECT_DOUBLE_EQ(defaults.real("coef"), 1.2);
  const KnobValues given(knobs, parse_policy_spec("p:max_split_per_batch=-1,rule=width"));
  EXPECT_EQ(given.integer_or_derived<int>("max_split_per_batch"), -1);
  EXPECT_EQ(given.integer("max_split_per_batch"), -1);
  EXPECT_EQ(given.word("rule"), "width");
  EXPECT_EQ(given.spec().to_string(), "p:max_split_per_batch=-1,rule=width");
  // Reading a knob as what the table does not declare is a programming error, not bad input.
  EXPECT_THROW(given.integer("rule"), std::logic_error);
  EXPECT_THROW(given.word("missing"), std::logic_error);
}

TEST(KnobValues, EveryRegisteredDefaultIsInItsDomain) {
  for (const PolicyInfo& p : policy_registry())
    for (const KnobInfo& k : p.knobs) {
      EXPECT_TRUE(k.domain.parse(k.default_value)) << p.name << "." << k.name << " = " << k.default_value;
      EXPECT_FALSE(k.doc.empty()) << p.name << "." << k.name;
    }
}

}  // namespace
}  // namespace mlasim::sim
