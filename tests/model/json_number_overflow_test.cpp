// JSON with a number beyond double ("2e766"): nlohmann's parser throws out_of_range, not parse_error, for it; the
// readers report it as the InputError for invalid JSON (found by fuzz/gpu_profile_fuzz; docs/reliability.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

TEST(JsonNumberOverflow, AGpuProfileWithANumberBeyondDoubleIsAnInputError) {
  const auto e = input_error_of(
      [&] { parse_gpu_json(R"({"name":"x","vendor":"amd","arch":"gfx942","num_cu":8,"hbm_tbps":2e766})", "x.json"); });
  ASSERT_TRUE(e) << "expected an InputError";
  EXPECT_EQ(e->field(), "gpu");
}

TEST(JsonNumberOverflow, AJsonFileWithANumberBeyondDoubleIsAnInputError) {
  const std::string path = (std::filesystem::temp_directory_path() / "mlasim_json_number_overflow.json").string();
  std::ofstream(path) << R"({"workload": {"batch": 2e766}})";
  const auto e = input_error_of([&] { read_json_file(path, "scenario"); });
  ASSERT_TRUE(e) << "expected an InputError";
  EXPECT_EQ(e->field(), "scenario");
  EXPECT_NE(std::string(e->what()).find("not valid JSON"), std::string::npos) << e->what();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mlasim
