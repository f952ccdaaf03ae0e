// The README's command blocks are goldens: every fenced block that starts with "$ mlasim ..." is run from the
// repository root and must print exactly the lines shown. A line "..." stands for any number of lines, so the
// README can shorten long output; everything else must match, so the README cannot drift from the program.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

struct Block {
  std::string args;  // after "$ mlasim "
  std::vector<std::string> expected;
  int line = 0;  // of the command in README.md
};

std::vector<Block> readme_blocks() {
  const std::vector<std::string> lines = lines_of(read_file(MLASIM_DATA_DIR "/../README.md"));
  std::vector<Block> blocks;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0 || lines[i + 1].rfind("$ mlasim ", 0) != 0) continue;
    Block b;
    b.args = lines[i + 1].substr(9);
    b.line = static_cast<int>(i + 2);
    size_t j = i + 2;
    for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) b.expected.push_back(lines[j]);
    blocks.push_back(std::move(b));
    i = j;
  }
  return blocks;
}

// Does `actual` from line a on match `expected` from line e on, with "..." matching any run of lines?
bool matches(const std::vector<std::string>& actual, size_t a, const std::vector<std::string>& expected, size_t e) {
  if (e == expected.size()) return a == actual.size();
  if (expected[e] == "...") {
    for (size_t skip = a; skip <= actual.size(); ++skip)
      if (matches(actual, skip, expected, e + 1)) return true;
    return false;
  }
  return a < actual.size() && actual[a] == expected[e] && matches(actual, a + 1, expected, e + 1);
}

TEST(ReadmeGolden, TheReadmeShowsPlanAndCompareBlocks) {
  bool plan = false, compare = false;
  for (const Block& b : readme_blocks()) {
    plan = plan || b.args.rfind("plan ", 0) == 0;
    compare = compare || b.args.rfind("compare ", 0) == 0;
  }
  EXPECT_TRUE(plan);
  EXPECT_TRUE(compare);
}

TEST(ReadmeGolden, EveryCommandBlockPrintsWhatTheReadmeShows) {
  for (const Block& b : readme_blocks()) {
    const CliResult r = run_cli_in(MLASIM_DATA_DIR "/..", b.args);
    EXPECT_EQ(r.code, 0) << "README.md line " << b.line << ": " << r.err;
    EXPECT_TRUE(matches(lines_of(r.out), 0, b.expected, 0))
        << "README.md line " << b.line << ": `mlasim " << b.args << "` printed:\n"
        << r.out;
  }
}

}  // namespace
}  // namespace mlasim::cli_test
