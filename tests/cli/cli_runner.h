#pragma once
// What the CLI tests share: running the built mlasim binary (MLASIM_CLI_PATH) for its exit code, stdout and stderr,
// temporary paths of their own, and the lines of an output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mlasim::cli_test {

struct CliResult {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// The lines of `text`, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// A path under the test temp dir that no other test process uses (ctest runs tests in parallel).
inline std::string temp_path(const std::string& name) {
  static std::atomic<int> counter{0};
  return ::testing::TempDir() + "mlasim_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + name;
}

// Runs `mlasim ARGS` in folder `cwd` ("" = the test's own).
inline CliResult run_cli_in(const std::string& cwd, const std::string& args) {
  const std::string err_file = temp_path("stderr.txt");
  const std::string cd = cwd.empty() ? "" : "cd '" + cwd + "' && ";
  const std::string cmd = cd + std::string(MLASIM_CLI_PATH) + " " + args + " 2>" + err_file;
  FILE* pipe = popen(cmd.c_str(), "r");
  CliResult r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_file);
  return r;
}

inline CliResult run_cli(const std::string& args) { return run_cli_in("", args); }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Bad input: exit code 2, nothing on stdout, exactly one line on stderr starting with "mlasim: error: <start>".
inline void expect_bad_input(const std::string& args, const std::string& message_start) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args;
  EXPECT_TRUE(r.out.empty()) << args;
  EXPECT_EQ(r.err.rfind("mlasim: error: " + message_start, 0), 0u) << args << " -> " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace mlasim::cli_test
