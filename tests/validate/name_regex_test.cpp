// Kernel-name regexes: counts bounded before std::regex compiles them (a fuzzed step rule once overflowed
// libstdc++'s count parser), brackets and escapes read as ECMAScript reads them, every refusal one InputError.
#include <gtest/gtest.h>

#include "mlasim/model/input_error.h"
#include "mlasim/validate/name_regex.h"
#include "mlasim/validate/step_rules.h"
#include "mlasim/validate/step_what_if.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

std::string refusal(const std::string& pattern) {
  const auto e = input_error_of([&] { name_regex(pattern, "match"); });
  if (!e) return "";
  EXPECT_EQ(e->field(), "match") << pattern;
  return e->message();
}

TEST(NameRegex, CompilesWhatKernelNamesNeed) {
  for (const std::string ok : {"^mla_a8w8.*", "gemm|nvjet", "a{3}", "a{2,5}", "a{1000}", "a{0,1000}", "(x)\\1",
                               "kernel_16384", "a,99999", "[{99999]", "\\{99999\\}", "[[:alpha:]]+", "x{007}"}) {
    EXPECT_EQ(refusal(ok), "") << ok;
    EXPECT_NO_THROW(name_regex(ok, "match")) << ok;
  }
  EXPECT_TRUE(std::regex_search("void mla_decode_kernel_16384<2>", name_regex("kernel_\\d+<2>", "m")));
  EXPECT_TRUE(std::regex_search("aaa", name_regex("^a{3}$", "m")));
}

TEST(NameRegex, RefusesCountsPastTheBound) {
  // The fuzzer's input, and its like: a count libstdc++ would overflow a long on, or copy a million times.
  for (const std::string bad :
       {"{2222222222222222222}", "a{2222222222222222222}", "a{1001}", "a{1,1001}", "a{0,99999999999999999999}",
        "(a)\\99999999999999999999", "[x]{5000}", "[[:alpha:]]{5000}", "[\\]]{5000}"}) {
    const std::string why = refusal(bad);
    EXPECT_NE(why.find("at most 1000"), std::string::npos) << bad << ": " << why;
  }
}

TEST(NameRegex, RefusesEmptyLongAndInvalidPatterns) {
  EXPECT_NE(refusal("").find("1..256 characters"), std::string::npos);
  EXPECT_NE(refusal(std::string(257, 'a')).find("1..256 characters"), std::string::npos);
  EXPECT_EQ(refusal(std::string(256, 'a')), "");
  for (const std::string bad : {"(", "a{2,1}", "a{", "[z-a]", "*"})
    EXPECT_NE(refusal(bad).find("is not a valid regular expression"), std::string::npos) << bad;
}

TEST(NameRegex, StepRulesAndEditsUseIt) {
  const auto rules_error = input_error_of([&] {
    step_rules_from_json(R"({"name": "n", "rules": [{"class": "copy", "match": "a{2222222222222222222}"}]})", "f.json");
  });
  EXPECT_TRUE(rules_error);
  if (rules_error) {
    EXPECT_EQ(rules_error->field(), "rules");
    EXPECT_NE(std::string(rules_error->what()).find("rules[0].match: takes repetition counts"), std::string::npos)
        << rules_error->what();
  }
  EXPECT_THROW(step_rules_from_json(R"({"name": "n", "rules": [{"class": "copy", "match": "x"}],
                                        "batch_from": {"match": "(a)\\99999"}})",
                                    "f.json"),
               InputError);
  const auto edit_error = input_error_of([&] { parse_step_edit("remove=re:a{99999}"); });
  EXPECT_TRUE(edit_error);
  if (edit_error) {
    EXPECT_EQ(edit_error->field(), "edit");
    EXPECT_NE(std::string(edit_error->what()).find("re: takes repetition counts"), std::string::npos)
        << edit_error->what();
  }
  EXPECT_NO_THROW(parse_step_edit("remove=re:^Memcpy{1,3}"));
}

}  // namespace
}  // namespace mlasim::validate
