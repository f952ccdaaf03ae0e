// The shared text helpers: comma lists, the CSV quoter, whole-file reads and atomic writes, JSON field readers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "mlasim/model/csv_cell.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "mlasim/model/text_file.h"
#include "mlasim/model/text_lists.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

std::string message_of(const std::function<void()>& f) {
  const auto e = input_error_of(f);
  return e ? e->what() : std::string();
}

TEST(TextLists, IntegersAndTheirErrors) {
  EXPECT_EQ(parse_int_list("1,4,16", "batch"), (std::vector<int>{1, 4, 16}));
  EXPECT_EQ(parse_int_list("0", "clusters", 0), (std::vector<int>{0}));
  EXPECT_EQ(message_of([] { parse_int_list("1,,2", "batch"); }),
            "batch: must be a comma list of integers >= 1, got '' in '1,,2'");
  EXPECT_EQ(message_of([] { parse_int_list("100,", "context"); }),
            "context: must be a comma list of integers >= 1, got '' in '100,'");
  EXPECT_EQ(message_of([] { parse_int_list("1k", "context"); }),
            "context: must be a comma list of integers >= 1, got '1k' in '1k'");
  EXPECT_EQ(message_of([] { parse_int_list("-1", "clusters", 0); }),
            "clusters: must be a comma list of integers >= 0, got '-1' in '-1'");
}

TEST(TextLists, Names) {
  EXPECT_EQ(parse_name_list("mi355x,h100", "gpu"), (std::vector<std::string>{"mi355x", "h100"}));
  EXPECT_EQ(message_of([] { parse_name_list("mi355x,", "gpu"); }), "gpu: must be a comma list of names, got 'mi355x,'");
}

TEST(CsvCell, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_cell("plain"), "plain");
  EXPECT_EQ(csv_cell("a,\"b\""), "\"a,\"\"b\"\"\"");
  EXPECT_EQ(csv_cell("two\nlines"), "\"two\nlines\"");
}

TEST(TextFile, AtomicWriteReplacesWholeAndFailsCleanly) {
  const std::string path = ::testing::TempDir() + "mlasim_text_file_" + std::to_string(::getpid()) + ".txt";
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_text_file(path, "in"), "second");
  std::filesystem::remove(path);
  EXPECT_EQ(message_of([] {
              write_file_atomically("/nonexistent/dir/x.csv", "x");
            }).rfind("out: /nonexistent/dir/x.csv: cannot write", 0),
            0u);
  EXPECT_EQ(message_of([] {
              read_text_file("/nonexistent.json", "scenario");
            }).rfind("scenario: /nonexistent.json: cannot read", 0),
            0u);
}

TEST(JsonFields, TypedReadsNameThePath) {
  const nlohmann::json j = nlohmann::json::parse(R"({"n": 3, "x": 0.5, "b": true, "s": "hi", "l": [1, 2]})");
  const JsonFields r(j, "top", {"n", "x", "b", "s", "l", "missing"});
  EXPECT_EQ(r.integer("n", 0, 1, 4), 3);
  EXPECT_EQ(r.integer("missing", 7, 1, 9), 7);
  EXPECT_EQ(r.real("x", 0, 0, 1), 0.5);
  EXPECT_TRUE(r.boolean("b", false));
  EXPECT_EQ(r.text("s", ""), "hi");
  EXPECT_EQ(r.integers("l", 1, 2, 4), (std::vector<int>{1, 2}));
  EXPECT_EQ(message_of([&] { r.integer("n", 0, 4, 9); }), "top.n: must be 4..9, got 3");
  EXPECT_EQ(message_of([&] { r.text("n", ""); }), "top.n: must be a string, got number");
  EXPECT_EQ(message_of([&] { r.integers("l", 2, 9, 4); }), "top.l: entry 0 must be an integer 2..9, got 1");
  EXPECT_EQ(
      message_of([&] { JsonFields(j, "top", {"n"}, "campaign"); }).rfind("top.b: is not a campaign field here", 0), 0u);
  EXPECT_EQ(message_of([] { JsonFields(nlohmann::json::array(), "", {}, "profile"); }),
            "profile: must be a JSON object, got array");
}

}  // namespace
}  // namespace mlasim
