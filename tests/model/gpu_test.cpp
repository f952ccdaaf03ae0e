#include <gtest/gtest.h>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "support/input_error_of.h"

namespace mlasim {
namespace {

using mlasim::testing_support::input_error_of;

TEST(Gpu, BuiltinProfilesLoadWithSources) {
  const auto names = builtin_gpu_names();
  for (const char* n : {"h100", "h200", "mi300x", "mi308x", "mi325x", "mi350x", "mi355x"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const auto& n : names) {
    const Gpu g = load_gpu(n);
    EXPECT_GT(g.num_cu, 0) << n;
    EXPECT_GT(g.hbm_tbps, 0) << n;
    EXPECT_TRUE(g.sources.count("num_cu")) << n;
    EXPECT_TRUE(g.sources.count("hbm_tbps")) << n;
  }
}

TEST(Gpu, Mi355xDatasheet) {
  const Gpu g = load_gpu("MI355X");
  EXPECT_EQ(g.arch, "gfx950");
  EXPECT_EQ(g.num_cu, 256);
  EXPECT_DOUBLE_EQ(g.hbm_tbps, 8.0);
}

TEST(Gpu, JsonRoundTrip) {
  Gpu g = load_gpu("mi300x");
  g.params["t_fix_us"] = GpuParam{1.5, "fitted", "test"};
  const Gpu back = parse_gpu_json(gpu_to_json(g), "round trip");
  EXPECT_EQ(back.num_cu, 304);
  EXPECT_EQ(back.params.at("t_fix_us").kind, "fitted");
  EXPECT_DOUBLE_EQ(back.param("t_fix_us", 0), 1.5);
}

// What a minimal profile whose field `field` is `value` (JSON text) gives: its error's message, or "no error".
std::string profile_error(const std::string& field, const std::string& value) {
  const std::string text =
      R"({"name":"x","vendor":"amd","arch":"gfx950","num_cu":8,"hbm_tbps":1,")" + field + "\":" + value + "}";
  const auto error = input_error_of([&] { parse_gpu_json(text, "x.json"); });
  return error ? std::string(error->what()) : std::string("no error");
}

// The held-out ratio error of two plans per kernel class (mlasim step's band) survives a round trip; a bad one is
// named by its field.
TEST(Gpu, RatioErrorRoundTripsAndABadOneIsNamed) {
  Gpu g = load_gpu("mi300x");
  g.ratio_error["wgmma-bf16"] = RatioError{1.2, 3.3, 240, "test"};
  const Gpu back = parse_gpu_json(gpu_to_json(g), "round trip");
  ASSERT_EQ(back.ratio_error.size(), 1u);
  const RatioError& e = back.ratio_error.at("wgmma-bf16");
  EXPECT_EQ(e.median_pct, 1.2);
  EXPECT_EQ(e.p90_pct, 3.3);
  EXPECT_EQ(e.pairs, 240);
  EXPECT_EQ(e.source, "test");
  const auto error_of = [](const std::string& table) { return profile_error("ratio_error", table); };
  EXPECT_EQ(error_of("[]"),
            "gpu.ratio_error: must be an object of kernel class -> {median_pct, p90_pct, pairs, "
            "source} in x.json");
  EXPECT_EQ(error_of(R"({"k":3})"),
            "gpu.ratio_error.k: must be an object {median_pct, p90_pct, pairs, source} in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1}})"), "gpu.ratio_error.k.p90_pct: must be a number >= 0 (%) in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1,"p90_pct":-2}})"),
            "gpu.ratio_error.k.p90_pct: must be a number >= 0 (%) in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":3,"p90_pct":2,"pairs":5}})"),
            "gpu.ratio_error.k.median_pct: must be at most p90_pct in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1,"p90_pct":2}})"),
            "gpu.ratio_error.k.pairs: missing (an integer >= 1) in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1,"p90_pct":2,"pairs":0}})"),
            "gpu.ratio_error.k.pairs: must be an integer >= 1 in x.json");
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1,"p90_pct":2,"pairs":"x"}})").rfind("gpu.ratio_error.k.pairs", 0), 0u);
  EXPECT_EQ(error_of(R"({"k":{"median_pct":1,"p90_pct":2,"pairs":2.5}})").rfind("gpu.ratio_error.k.pairs", 0), 0u);
  EXPECT_EQ(error_of(R"({"k":{"median_pct":2,"p90_pct":2,"pairs":1}})"), "no error");  // median = p90 is allowed
}

// The fuse and remove edits' measured error per site (mlasim step's band for them) survives a round trip; a bad one,
// or an edit kind that has none, is named by its field.
TEST(Gpu, EditErrorRoundTripsAndABadOneIsNamed) {
  Gpu g = load_gpu("mi300x");
  g.edit_error["fuse"] = EditError{0.3, 1.3, 47, "test"};
  const Gpu back = parse_gpu_json(gpu_to_json(g), "round trip");
  ASSERT_EQ(back.edit_error.size(), 1u);
  const EditError& e = back.edit_error.at("fuse");
  EXPECT_EQ(e.median_us, 0.3);
  EXPECT_EQ(e.p90_us, 1.3);
  EXPECT_EQ(e.edits, 47);
  EXPECT_EQ(e.source, "test");
  const auto error_of = [](const std::string& table) { return profile_error("edit_error", table); };
  EXPECT_EQ(error_of("[]"),
            "gpu.edit_error: must be an object of edit kind (fuse, remove) -> {median_us, p90_us, edits, source} in "
            "x.json");
  EXPECT_EQ(error_of(R"({"gaps":{}})"), "gpu.edit_error.gaps: unknown edit kind (fuse, remove) in x.json");
  EXPECT_EQ(error_of(R"({"fuse":3})"),
            "gpu.edit_error.fuse: must be an object {median_us, p90_us, edits, source} in x.json");
  EXPECT_EQ(error_of(R"({"remove":{"median_us":1}})"),
            "gpu.edit_error.remove.p90_us: must be a number >= 0 (us) in x.json");
  EXPECT_EQ(error_of(R"({"fuse":{"median_us":3,"p90_us":2,"edits":5}})"),
            "gpu.edit_error.fuse.median_us: must be at most p90_us in x.json");
  EXPECT_EQ(error_of(R"({"fuse":{"median_us":1,"p90_us":2}})"),
            "gpu.edit_error.fuse.edits: missing (an integer >= 1) in x.json");
  EXPECT_EQ(error_of(R"({"fuse":{"median_us":1,"p90_us":2,"edits":0}})"),
            "gpu.edit_error.fuse.edits: must be an integer >= 1 in x.json");
  EXPECT_EQ(error_of(R"({"fuse":{"median_us":1,"p90_us":2,"edits":3}})"), "no error");
}

TEST(Gpu, UnknownNameListsTheKnownOnes) {
  const auto e = input_error_of([&] { load_gpu("mi999"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()).rfind("gpu: unknown GPU 'mi999'; known: h100, h200, mi300x", 0), 0u) << e->what();
}

TEST(Gpu, BadJsonNamesTheField) {
  EXPECT_THROW(parse_gpu_json("{", "x.json"), InputError);
  const auto e = input_error_of(
      [&] { parse_gpu_json(R"({"name":"x","vendor":"amd","arch":"gfx950","num_cu":0,"hbm_tbps":1})", "x.json"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), "gpu.num_cu: must be 1..4096, got 0 in x.json");
}

}  // namespace
}  // namespace mlasim
