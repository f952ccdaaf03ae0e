// A GPU profile whose fields hold numbers that do not fit or values of another type is one InputError naming the
// field, not undefined behaviour or nlohmann's own exception (found by fuzz/gpu_profile_fuzz; docs/reliability.md).
#include <gtest/gtest.h>

#include <string>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

// A minimal valid profile with `extra` (",key: value" pairs) appended.
std::string profile(const std::string& extra, const std::string& num_cu = "8") {
  return R"({"name":"x","vendor":"amd","arch":"gfx942","hbm_tbps":1,"num_cu":)" + num_cu + extra + "}";
}

std::string field_of_error(const std::string& text) {
  const auto e = input_error_of([&] { parse_gpu_json(text, "x.json"); });
  return e ? e->field() : "(no error)";
}

TEST(GpuProfileFieldTypes, AMinimalProfileReads) { EXPECT_EQ(parse_gpu_json(profile(""), "x.json").num_cu, 8); }

TEST(GpuProfileFieldTypes, AnIntegerFieldBeyondIntIsAnInputError) {
  EXPECT_EQ(field_of_error(profile("", "1e88")), "gpu.num_cu");  // the fuzzer's input: undefined behaviour before
  EXPECT_EQ(field_of_error(profile("", "18446744073709551615")), "gpu.num_cu");
  EXPECT_EQ(field_of_error(profile(R"(,"wave_size":1e20)")), "gpu.wave_size");
  EXPECT_EQ(field_of_error(profile(R"(,"model_error":{"k":{"rms_pct":1,"rows":1e30}})")), "gpu.model_error.k.rows");
}

TEST(GpuProfileFieldTypes, AFieldOfAnotherTypeIsAnInputError) {
  EXPECT_EQ(field_of_error(profile(R"(,"display_name":3)")), "gpu.display_name");
  EXPECT_EQ(field_of_error(profile(R"(,"clock_mhz":"fast")")), "gpu.clock_mhz");
  EXPECT_EQ(field_of_error(profile(R"(,"sources":{"a":1})")), "gpu.sources.a");
  EXPECT_EQ(field_of_error(profile(R"(,"params":{"t_fix_us":{"value":1,"kind":2}})")), "gpu.params.t_fix_us.kind");
  EXPECT_EQ(field_of_error(profile(R"(,"model_error":{"k":{"rms_pct":1,"source":[]}})")), "gpu.model_error.k.source");
}

}  // namespace
}  // namespace mlasim
