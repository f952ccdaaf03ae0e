// Decode-step what-if: traces read (Chrome trace with step markers, rocprofv3 CSV, gzip), steps cut by markers and
// by gaps, kernels classed by the rules, and each edit's arithmetic on a step whose numbers are known.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mlasim/model/input_error.h"
#include "mlasim/model/l2_prior_writes.h"
#include "mlasim/sim/attention_bytes.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/l2_carry.h"
#include "mlasim/sim/l2_writeback.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/sim/trace_device_time.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/op_bytes.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_batches.h"
#include "mlasim/validate/step_rules.h"
#include "mlasim/validate/step_what_if.h"
#include "support/input_error_of.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;
using nlohmann::json;

const StepRules& rules() {
  static const StepRules r = load_step_rules("mlasim-torch");
  return r;
}

// One layer's kernels: name, duration; each starts `gap` after the previous one ends.
struct K {
  const char* name;
  double dur;
};
const std::vector<K> kLayer = {{"q_absorb_bmm_kernel", 4},
                               {"CatArrayBatchedCopy", 2},
                               {"rope_kv_write_kernel", 3},
                               {"Memcpy DtoD (Device -> Device)", 1},
                               {"void mla_decode_wgmma_persistent_kernel<2>", 50},
                               {"void mla_reduce_kernel<8>", 6},
                               {"nvjet_tst_gemm", 30}};

// A Chrome trace of `steps` steps of `layers` layers each, 1 us gaps between kernels, 500 us between steps; every
// step inside a ProfilerStep#N marker whose host launches correlate with its kernels. With `batches`, step s's
// RoPE + KV-write kernels carry a launch grid of batches[s % size] blocks, one per request.
json chrome_trace(int steps, int layers, const std::vector<int>& batches = {}) {
  json events = json::array();
  double t = 1000;
  long long correlation = 1;
  for (int s = 0; s < steps; ++s) {
    const double host_begin = t - 400;
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "ProfilerStep#" + std::to_string(s + 3)},
                      {"ts", host_begin},
                      {"dur", 300}});
    for (int l = 0; l < layers; ++l)
      for (const K& k : kLayer) {
        events.push_back({{"ph", "X"},
                          {"cat", "cuda_runtime"},
                          {"name", "cudaLaunchKernel"},
                          {"ts", host_begin + 1},
                          {"dur", 1},
                          {"args", {{"correlation", correlation}}}});
        json args = {{"correlation", correlation}, {"stream", 7}};
        if (!batches.empty() && std::string(k.name) == "rope_kv_write_kernel")
          args["grid"] = {batches[static_cast<size_t>(s) % batches.size()], 1, 1};
        events.push_back({{"ph", "X"},
                          {"cat", k.name[0] == 'M' ? "gpu_memcpy" : "kernel"},
                          {"name", k.name},
                          {"ts", t},
                          {"dur", k.dur},
                          {"args", args}});
        ++correlation;
        t += k.dur + 1;
      }
    t += 500;
  }
  return {{"traceEvents", events}};
}

StepAnalysis analyse(const std::string& text, StepOptions o = {}) {
  return analyse_steps(parse_kernel_trace(text, "t.json"), rules(), o);
}

TEST(StepTrace, ChromeTraceStepsComeFromTheMarkers) {
  const StepAnalysis a = analyse(chrome_trace(4, 3).dump(), {1, 0, true});
  EXPECT_EQ(a.format, "chrome-trace");
  EXPECT_EQ(a.split, "markers");
  EXPECT_EQ(a.total_steps, 4);
  ASSERT_EQ(a.steps.size(), 3u);
  EXPECT_EQ(a.unmarked_kernels, 0);
  const DecodeStep& s = a.steps[0];
  EXPECT_EQ(s.layers(), 3);
  EXPECT_EQ(s.kernels.size(), 21u);
  // 3 x 96 us of kernels and 20 gaps of 1 us.
  EXPECT_DOUBLE_EQ(s.time_us(), 3 * 96.0 + 20);
  EXPECT_DOUBLE_EQ(s.gaps_us(), 20);
  const auto c = s.class_us();
  EXPECT_DOUBLE_EQ(c.at("q_prep"), 18);
  EXPECT_DOUBLE_EQ(c.at("mla_stage1"), 150);
  EXPECT_DOUBLE_EQ(c.at("mla_reduce"), 18);
  EXPECT_DOUBLE_EQ(c.at("copy"), 3);
  EXPECT_DOUBLE_EQ(c.at("other"), 90);
  EXPECT_NEAR(summarize(a.steps).attention_share(), 168.0 / 308, 1e-12);
}

TEST(StepTrace, WithoutMarkersTheGapsBetweenStepsCutThem) {
  json t = chrome_trace(5, 2);
  json kept = json::array();
  for (const json& e : t["traceEvents"])
    if (e["cat"] != "user_annotation") kept.push_back(e);
  t["traceEvents"] = kept;
  const StepAnalysis a = analyse(t.dump());
  EXPECT_EQ(a.total_steps, 5);
  EXPECT_EQ(a.split, "gaps > 100 us");
  EXPECT_DOUBLE_EQ(a.steps[2].time_us(), 2 * 96.0 + 13);
  // Markers ignored on request; one long step when the gap is set above the step gaps.
  EXPECT_EQ(analyse(chrome_trace(5, 2).dump(), {0, 0, false}).total_steps, 5);
  EXPECT_EQ(analyse(t.dump(), {0, 1000, true}).split, "whole trace");
}

TEST(StepTrace, AKernelWithoutACorrelatedLaunchJoinsTheStepBeforeIt) {
  json t = chrome_trace(2, 1);
  for (json& e : t["traceEvents"])
    if (e["name"] == "nvjet_tst_gemm") e["args"].erase("correlation");
  const StepAnalysis a = analyse(t.dump());
  EXPECT_EQ(a.unmarked_kernels, 2);
  EXPECT_EQ(a.steps[0].kernels.size(), kLayer.size());
  EXPECT_EQ(a.steps[1].kernels.size(), kLayer.size());
}

// torch.profiler's ProfilerStep ranges cut the steps when a trace also has decode_step ranges inside them (each
// step would otherwise be cut in two).
TEST(StepTrace, ProfilerStepsWinOverDecodeStepRangesInsideThem) {
  json t = chrome_trace(3, 1);
  json inner = json::array();
  for (const json& e : t["traceEvents"])
    if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0)
      inner.push_back({{"ph", "X"},
                       {"cat", "user_annotation"},
                       {"name", "decode_step"},
                       {"ts", e["ts"].get<double>() + 0.5},
                       {"dur", 100}});
  for (json& e : inner) t["traceEvents"].push_back(e);
  const StepAnalysis a = analyse(t.dump());
  EXPECT_EQ(a.total_steps, 3);
  EXPECT_EQ(a.steps.front().kernels.size(), kLayer.size());
  // Without ProfilerStep ranges, the decode_step ranges cut them.
  json only = {{"traceEvents", json::array()}};
  for (const json& e : t["traceEvents"])
    if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) != 0) only["traceEvents"].push_back(e);
  EXPECT_EQ(analyse(only.dump()).split, "markers");
}

// Markers whose ranges hold no correlated launch place no kernel: the device gaps cut the steps instead.
TEST(StepTrace, MarkersThatPlaceNoKernelFallBackToGaps) {
  json t = chrome_trace(3, 1);
  for (json& e : t["traceEvents"])
    if (e.contains("args")) e["args"].erase("correlation");
  const StepAnalysis a = analyse(t.dump());
  EXPECT_EQ(a.total_steps, 3);
  EXPECT_NE(a.split.find("gaps"), std::string::npos) << a.split;
  EXPECT_NE(a.split.find("step markers hold no correlated launch"), std::string::npos) << a.split;
}

TEST(StepTrace, RocprofCsvInNanoseconds) {
  const std::string csv =
      "Kernel_Name,Start_Timestamp,End_Timestamp,Queue_Id\n"
      "mla_a8w8_qh16_qseqlen1_gqaratio16_ps,1000,51000,1\n"
      "kn_mla_reduce_v1_ps,52000,58000,1\n"
      "concat_and_cache_mla_kernel,59000,62000,1\n";
  const KernelTrace t = parse_kernel_trace(csv, "r.csv");
  EXPECT_EQ(t.format, "rocprof");
  const StepAnalysis a = analyse_steps(t, load_step_rules("vllm-rocm-aiter"), {});
  ASSERT_EQ(a.steps.size(), 1u);
  const auto c = a.steps[0].class_us();
  EXPECT_DOUBLE_EQ(c.at("mla_stage1"), 50);
  EXPECT_DOUBLE_EQ(c.at("mla_reduce"), 6);
  EXPECT_DOUBLE_EQ(c.at("rope_kv_write"), 3);
  EXPECT_DOUBLE_EQ(a.steps[0].time_us(), 61);
}

TEST(StepTrace, OverlappingKernelsCountTheirExposedTimeOnce) {
  const std::string csv =
      "Kernel_Name,Start_Timestamp,End_Timestamp\n"
      "a,0,10000\nb,5000,12000\nc,2000,8000\nd,20000,21000\n";
  const StepAnalysis a = analyse_steps(parse_kernel_trace(csv, "o.csv"), rules(), {0, 1000, true});
  EXPECT_DOUBLE_EQ(a.steps[0].time_us(), 21);
  EXPECT_DOUBLE_EQ(a.steps[0].gaps_us(), 8);
}

TEST(StepTrace, GzipTracesReadAsTheirText) {
  const std::string text = chrome_trace(2, 1).dump();
  const std::string path = ::testing::TempDir() + "/trace.json.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  EXPECT_EQ(read_kernel_trace(path).kernels.size(), 2 * kLayer.size());
  std::ofstream(path, std::ios::binary) << std::string("\x1f\x8b\x08\x00garbage", 11);
  EXPECT_THROW(read_kernel_trace(path), InputError);
}

TEST(StepTrace, MalformedTracesNameWhatIsWrong) {
  const auto field_of = [](const std::string& text) {
    const auto e = input_error_of([&] { parse_kernel_trace(text, "bad"); });
    return e ? std::string(e->what()) : std::string();
  };
  EXPECT_NE(field_of("").find("is empty"), std::string::npos);
  EXPECT_NE(field_of("{\"traceEvents\": 3}").find("traceEvents"), std::string::npos);
  EXPECT_NE(field_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]})").find("dur"),
            std::string::npos);
  EXPECT_NE(field_of(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})")
                .find("no GPU kernel"),
            std::string::npos);
  EXPECT_NE(field_of("Kernel_Name,Start_Timestamp\nk,1\n").find("End_Timestamp"), std::string::npos);
  EXPECT_NE(field_of("Kernel_Name,Start_Timestamp,End_Timestamp\nk,9,3\n").find("before Start_Timestamp"),
            std::string::npos);
  EXPECT_NE(field_of("Kernel_Name,Start_Timestamp,End_Timestamp\nk,x,3\n").find("Start_Timestamp"), std::string::npos);
  EXPECT_NE(field_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,
                         "args": {"grid": [4, 0, 1]}}]})")
                .find("args.grid[1]"),
            std::string::npos);
  EXPECT_NE(field_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,
                         "args": {"grid": 4}}]})")
                .find("args.grid"),
            std::string::npos);
  EXPECT_NE(field_of("Kernel_Name,Start_Timestamp,End_Timestamp,Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Workgroup_Size_X,"
                     "Workgroup_Size_Y,Workgroup_Size_Z\nk,1,3,64,1,1,0,1,1\n")
                .find("Workgroup_Size_X"),
            std::string::npos);
}

TEST(StepRules, RuleFilesReadAndBadOnesAreNamed) {
  for (const std::string& name : step_rule_names()) EXPECT_NO_THROW(load_step_rules(name)) << name;
  EXPECT_GE(step_rule_names().size(), 4u);
  EXPECT_EQ(rules().classify("void mla_decode_wgmma_persistent_kernel<2>(DecodeParams)"), "mla_stage1");
  EXPECT_EQ(rules().classify("sm90_xmma_gemm"), "other");
  // A graph's memcpy node runs as one of CUDA's copy kernels, whose name changes with the copy's size.
  for (const char* copy : {"Memcpy DtoD (Device -> Device)", "memcpy128", "memcpy32_post"})
    EXPECT_EQ(rules().classify(copy), "copy") << copy;
  const auto message = [](const std::string& text) {
    const auto e = input_error_of([&] { step_rules_from_json(text, "r.json"); });
    return e ? std::string(e->what()) : std::string();
  };
  EXPECT_NE(message(R"({"name": "x", "rules": [{"class": "attention", "match": "a"}]})").find("rules[0].class"),
            std::string::npos);
  EXPECT_NE(message(R"({"name": "x", "rules": [{"class": "copy", "match": "("}]})").find("rules[0].match"),
            std::string::npos);
  EXPECT_NE(message(R"({"name": "x", "rules": [], "extra": 1})").find("extra"), std::string::npos);
  const std::string one_rule = R"("rules": [{"class": "copy", "match": "a"}])";
  EXPECT_NE(message(R"({"name": "x", )" + one_rule + R"(, "batch_from": {"match": "k", "grid_axis": "w"}})")
                .find("batch_from.grid_axis"),
            std::string::npos);
  EXPECT_NE(message(R"({"name": "x", )" + one_rule + R"(, "batch_from": {"match": "k", "divide_by": 0}})")
                .find("batch_from.divide_by"),
            std::string::npos);
  EXPECT_NE(message(R"({"name": "x", )" + one_rule + R"(, "batch_from": {"grid_axis": "x"}})").find("batch_from.match"),
            std::string::npos);
  EXPECT_THROW(load_step_rules("nosuch"), InputError);
}

// The edits on a step of known numbers (chrome_trace: 96 us of kernels per layer, 1 us gaps).
class StepEdits : public ::testing::Test {
 protected:
  StepAnalysis a = analyse(chrome_trace(3, 2).dump());
  StepWhatIf apply(const std::vector<std::string>& edits, const sim::WorkloadContext* ctx = nullptr,
                   const std::string& ran = "aiter-v1") {
    std::vector<StepEdit> parsed;
    for (const auto& e : edits) parsed.push_back(parse_step_edit(e));
    return apply_step_edits(a, parsed, {ctx, ran});
  }
};

TEST_F(StepEdits, RemoveTakesTheKernelsAndTheirLaunchGaps) {
  const StepWhatIf w = apply({"remove=copy"});
  EXPECT_DOUBLE_EQ(w.before_summary.time_us, 2 * 96.0 + 13);
  EXPECT_DOUBLE_EQ(w.after_summary.time_us, 2 * 95.0 + 11);
  EXPECT_DOUBLE_EQ(w.after_summary.class_us.at("copy"), 0);
  EXPECT_EQ(w.notes.size(), 1u);
  // A regex selector.
  EXPECT_DOUBLE_EQ(apply({"remove=re:^Memcpy"}).after_summary.time_us, 2 * 95.0 + 11);
}

sim::WorkloadContext h100_context() {
  sim::Workload w;
  w.gpu = "h100";
  w.batch = sim::BatchSpec::uniform(16, 8192);
  w.heads = 128;
  w.q_dtype = w.kv_dtype = DType::bf16;
  w.page_size = 64;
  return sim::resolve(w);
}

TEST_F(StepEdits, FuseMakesEachRunOneKernel) {
  // q_absorb (4) and cat (2) run back to back: one kernel of 1.5 us, one gap fewer per layer.
  const StepWhatIf w = apply({"fuse=q_prep:us=1.5"});
  EXPECT_DOUBLE_EQ(w.after_summary.class_us.at("q_prep"), 3.0);
  EXPECT_DOUBLE_EQ(w.after_summary.time_us, 2 * (96.0 - 6 + 1.5) + 11);
  EXPECT_DOUBLE_EQ(w.after_summary.kernels, 12);
}

TEST_F(StepEdits, AFusedKernelGivenByItsBytesIsAStreamKernel) {
  // The H100's measured stream kernel: its fixed part plus the bytes at its bandwidth, named in the edit's note.
  sim::WorkloadContext ctx = h100_context();
  ASSERT_TRUE(has_stream_kernel(ctx.params));
  const double us = ctx.params.stream_kernel_us + 18e6 / (ctx.params.stream_kernel_tbps * 1e6);
  EXPECT_NEAR(stream_kernel_time_us(ctx.params, 18e6), us, 1e-12);
  const StepWhatIf w = apply({"fuse=q_prep:bytes=18e6"}, &ctx);
  EXPECT_NEAR(w.after_summary.class_us.at("q_prep"), 2 * us, 1e-9);
  EXPECT_NEAR(w.after_summary.time_us, 2 * (96.0 - 6 + us) + 11, 1e-9);
  EXPECT_NE(w.notes.back().find("a stream kernel: 1.82 us + 18 MB read at 2.66 TB/s)"), std::string::npos)
      << w.notes.back();
  // Written bytes go at the write bandwidth; the fixed part is paid once.
  ASSERT_GT(ctx.params.stream_write_tbps, ctx.params.stream_kernel_tbps);
  const double mixed = ctx.params.stream_kernel_us + 12e6 / (ctx.params.stream_kernel_tbps * 1e6) +
                       6e6 / (ctx.params.stream_write_tbps * 1e6);
  EXPECT_NEAR(stream_kernel_time_us(ctx.params, 18e6, 6e6), mixed, 1e-12);
  const StepWhatIf rw = apply({"fuse=q_prep:bytes=18e6:written=6e6"}, &ctx);
  EXPECT_NEAR(rw.after_summary.class_us.at("q_prep"), 2 * mixed, 1e-9);
  EXPECT_NE(rw.notes.back().find("12 MB read at 2.66 TB/s + 6 MB written at 4.14 TB/s"), std::string::npos)
      << rw.notes.back();
  // Without a write bandwidth, writes go at the read one.
  sim::WorkloadContext reads_only = ctx;
  reads_only.params.stream_write_tbps = 0;
  EXPECT_NEAR(stream_kernel_time_us(reads_only.params, 18e6, 6e6), us, 1e-12);
  // A GPU without one: the bytes at b_hbm_tbps, and the note says that nothing was measured.
  ctx.params.stream_kernel_us = ctx.params.stream_kernel_tbps = 0;
  const StepWhatIf bare = apply({"fuse=q_prep:bytes=18e6"}, &ctx);
  EXPECT_NEAR(bare.after_summary.class_us.at("q_prep"), 2 * 18e6 / (ctx.params.b_hbm_tbps * 1e6), 1e-9);
  EXPECT_NE(bare.notes.back().find("no stream kernel measured on this GPU"), std::string::npos) << bare.notes.back();
}

TEST_F(StepEdits, GapsBecomeTheGivenTime) {
  EXPECT_DOUBLE_EQ(apply({"gaps=0"}).after_summary.time_us, 2 * 96.0);
  EXPECT_DOUBLE_EQ(apply({"gaps=3"}).after_summary.time_us, 2 * 96.0 + 13 * 3);
}

// The next kernel's extra time under `next` over `ran`: what each plan leaves dirty in L2 (sim/l2_carry.h).
double carry_change(const std::string& ran, const std::string& next, const sim::WorkloadContext& ctx) {
  const sim::L2Carry c = sim::l2_carry_of(ctx.params);
  const auto carry = [&](const std::string& policy) {
    const sim::Evaluation e = sim::evaluate(policy, ctx);
    return sim::l2_carry_us(sim::l2_dirty(*e.plan, e.prediction->timeline, ctx.batch, c), c);
  };
  return carry(next) - carry(ran);
}

// The plan's kernels as a trace times them: kernel_us less the event timing's overhead (sim/trace_device_time.h).
double device_us(const std::string& policy, const sim::WorkloadContext& ctx) {
  const sim::Evaluation e = sim::evaluate(policy, ctx);
  return sim::trace_device_us(e.prediction->metrics, ctx.params,
                              sim::plan_kernels(*e.plan, sim::kernel_batch(*e.plan, ctx.batch)));
}

TEST_F(StepEdits, APolicyEditScalesTheAttentionByTheModelsRatio) {
  const sim::WorkloadContext ctx = h100_context();
  const double r = device_us("aiter-v1", ctx) / device_us("aiter-v1:max_split_per_batch=2", ctx);
  // The H100 profile carries the event timing's overhead, so the ratio is not that of kernel_us.
  ASSERT_GT(ctx.params.events_overhead_us, 0);
  EXPECT_NE(r, sim::evaluate("aiter-v1", ctx).prediction->metrics.kernel_us /
                   sim::evaluate("aiter-v1:max_split_per_batch=2", ctx).prediction->metrics.kernel_us);
  const double carry = carry_change("aiter-v1:max_split_per_batch=2", "aiter-v1", ctx);
  const StepWhatIf s = apply({"policy=aiter-v1"}, &ctx, "aiter-v1:max_split_per_batch=2");
  EXPECT_NEAR(s.after_summary.class_us.at("mla_stage1") + s.after_summary.class_us.at("mla_reduce"), 2 * 56.0 * r,
              1e-9);
  EXPECT_NEAR(s.after_summary.time_us, 2 * (96.0 - 56 + 56 * r + carry) + 13, 1e-9);
  EXPECT_DOUBLE_EQ(s.tokens_per_step, 16);
  // A plan without partials has no reduce: its kernel and launch gap go.
  ASSERT_EQ(sim::evaluate("fixed:splits=1", ctx).prediction->metrics.num_partials, 0);
  const double unsplit_carry = carry_change("aiter-v1:max_split_per_batch=2", "fixed:splits=1", ctx);
  const StepWhatIf u = apply({"policy=fixed:splits=1"}, &ctx, "aiter-v1:max_split_per_batch=2");
  EXPECT_DOUBLE_EQ(u.after_summary.class_us.at("mla_reduce"), 0);
  const double unsplit_r = device_us("fixed:splits=1", ctx) / device_us("aiter-v1:max_split_per_batch=2", ctx);
  EXPECT_NEAR(u.after_summary.time_us, 2 * (96.0 - 56 + 56 * unsplit_r + unsplit_carry) + 11, 1e-9);
}

// The class of the plan that ran carries the measured attention's excess over its predicted time to the new plan in
// the share policy_offset_carry of the ratio: 1 is the ratio, 0 the new plan's predicted time whatever was
// measured, between the two a mix; the edit's line and figures say so.
TEST_F(StepEdits, APolicyEditCarriesTheAttentionsExcessInItsClasssShare) {
  sim::WorkloadContext ctx = h100_context();
  const std::string ran = "aiter-v1:max_split_per_batch=2";
  const double r = device_us("aiter-v1", ctx) / device_us(ran, ctx), next = device_us("aiter-v1", ctx);
  const auto attention = [&](double carry) {
    set_cost_param(ctx.params, "wgmma-bf16-pair.policy_offset_carry", carry);
    const StepWhatIf s = apply({"policy=aiter-v1"}, &ctx, ran);
    EXPECT_EQ(s.policy_changes.size(), 1u);
    EXPECT_DOUBLE_EQ(s.policy_changes.at(0).offset_carry, carry);
    EXPECT_EQ(s.policy_changes.at(0).ran_class, "wgmma-bf16-pair");
    EXPECT_EQ(s.notes.at(0).find("policy_offset_carry") != std::string::npos, carry != 1) << s.notes.at(0);
    return s.after_summary.class_us.at("mla_stage1") + s.after_summary.class_us.at("mla_reduce");
  };
  ASSERT_EQ(sim::evaluate(ran, ctx).prediction->metrics.kernel_class, "wgmma-bf16-pair");
  EXPECT_NEAR(attention(1), 2 * 56.0 * r, 1e-9);  // two layers of 56 us measured
  EXPECT_NEAR(attention(0), 2 * next, 1e-9);
  EXPECT_NEAR(attention(0.25), 2 * (0.75 * next + 0.25 * 56.0 * r), 1e-9);
  EXPECT_THROW(set_cost_param(ctx.params, "wgmma-bf16-pair.policy_offset_carry", 1.5), InputError);
}

// The kernel after each layer's attention (here the GEMM) writes back what the attention left dirty in L2: a plan
// with more partials leaves more, and the GEMM takes that much longer; every other kernel keeps its time.
TEST_F(StepEdits, TheKernelAfterTheAttentionTakesTheL2CarryOver) {
  const sim::WorkloadContext ctx = h100_context();
  const double carry = carry_change("fixed:splits=1", "fixed:splits=4", ctx);
  EXPECT_GT(carry, 4.0);  // 64 partial rows (16.8 MB, one wave) against 16 output rows (2.1 MB)
  const StepWhatIf s = apply({"policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  EXPECT_NEAR(s.after_summary.class_us.at("other"), 2 * (30.0 + carry), 1e-9);
  EXPECT_NEAR(s.after_summary.class_us.at("q_prep"), s.before_summary.class_us.at("q_prep"), 1e-9);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find(fmt::format("the next kernel {:+.2f} us", carry)), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[0].find("2 kernels per step took the carry-over"), std::string::npos) << s.notes[0];
  // The note's figures, for tools.
  ASSERT_EQ(s.policy_changes.size(), 1u);
  const PolicyChangeFigures& f = s.policy_changes[0];
  EXPECT_EQ(f.edit, "policy=fixed:splits=4");
  EXPECT_EQ(f.ran_policy, "fixed:splits=1");
  EXPECT_EQ(f.next_policy, "fixed:splits=4");
  EXPECT_EQ(f.requests, ctx.batch.size());
  EXPECT_NEAR(f.ratio(), device_us("fixed:splits=4", ctx) / device_us("fixed:splits=1", ctx), 1e-12);
  EXPECT_TRUE(f.carry_known);
  EXPECT_NEAR(f.carry_us, carry, 1e-12);
  EXPECT_GT(f.dirty_next_mb, f.dirty_ran_mb);
  EXPECT_EQ(f.missed_ran_mb, 0.0);  // no partials to read back
  // A GPU profile that carries no carry-over parameters leaves the GEMM as measured, and says so.
  sim::WorkloadContext unmeasured = ctx;
  unmeasured.params.l2_carry_us_per_mb = unmeasured.params.l2_carry_cap_mb = 0;
  const StepWhatIf u = apply({"policy=fixed:splits=4"}, &unmeasured, "fixed:splits=1");
  EXPECT_NEAR(u.after_summary.class_us.at("other"), 2 * 30.0, 1e-9);
  EXPECT_NE(u.notes[0].find("no L2 carry-over measured on h100"), std::string::npos) << u.notes[0];
  ASSERT_EQ(u.policy_changes.size(), 1u);
  EXPECT_FALSE(u.policy_changes[0].carry_known);
  EXPECT_EQ(u.policy_changes[0].carry_us, 0.0);
}

// The policy edits' band: each step's attention, where its plan is no longer the one that ran, times the p90 of the
// two plans' ratio error (the profile's ratio_error of their kernel class); none where the class has none, where
// every step runs the plan that ran, or where the steps run more than one query token; edits of other kinds after
// it, or before it where they leave the attention as measured, leave it as it was.
TEST_F(StepEdits, ThePolicyEditsBandIsTheAttentionTimesTheRatioError) {
  sim::WorkloadContext ctx = h100_context();
  ctx.gpu.ratio_error.clear();
  ctx.gpu.edit_error.clear();  // the policy edits' part alone (the fuse and remove edits' part: the test after)
  const std::string cls = sim::evaluate("fixed:splits=4", ctx).prediction->metrics.kernel_class;
  ASSERT_EQ(cls, sim::evaluate("fixed:splits=1", ctx).prediction->metrics.kernel_class);
  const StepWhatIf none = apply({"policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  EXPECT_FALSE(none.band_us);
  EXPECT_EQ(none.band_basis, "no ratio error of " + cls + " measured on h100");
  EXPECT_NE(none.notes[0].find("; no ratio error of " + cls + " measured on h100"), std::string::npos) << none.notes[0];
  EXPECT_EQ(none.policy_changes[0].ratio_pairs, 0);

  ctx.gpu.ratio_error[cls] = RatioError{1.0, 4.0, 40, "test"};
  const StepWhatIf s = apply({"policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  ASSERT_TRUE(s.band_us);
  const auto attention = [](const StepWhatIf& w) {
    return w.after_summary.class_us.at("mla_stage1") + w.after_summary.class_us.at("mla_reduce");
  };
  EXPECT_GT(attention(s), 0);
  EXPECT_NEAR(*s.band_us, 0.04 * attention(s), 1e-9);
  // Each step's own half width, whose mean the band is (every step here runs the new plan).
  ASSERT_EQ(s.band_per_step_us.size(), s.after.size());
  double per_step = 0;
  for (double b : s.band_per_step_us) per_step += b;
  EXPECT_NEAR(per_step / static_cast<double>(s.after.size()), *s.band_us, 1e-9);
  EXPECT_NE(s.band_basis.find("over sessions no fit took as input on h100 (" + cls + " 4.0 % over 40 pairs)"),
            std::string::npos)
      << s.band_basis;
  // The trace gives no step its batch: the basis says the band takes the flags'.
  EXPECT_NE(s.band_basis.find("steps take the flags' batch, which the band takes to be theirs"), std::string::npos)
      << s.band_basis;
  EXPECT_FALSE(s.other_edits());
  const PolicyChangeFigures& f = s.policy_changes[0];
  EXPECT_EQ(f.kernel_class, cls);
  EXPECT_EQ(f.ratio_p90_pct, 4.0);
  EXPECT_EQ(f.ratio_pairs, 40);
  EXPECT_NE(s.notes[0].find("; the ratio of " + cls +
                            " plans within 4.0 % in 90 % of 40 pairs from sessions no fit took as input"),
            std::string::npos)
      << s.notes[0];
  // Edits of other kinds after it, the attention's own among them, leave the band; they are said to have run.
  for (const char* other : {"gaps=0", "fuse=mla_stage1+mla_reduce:us=5", "remove=mla_reduce"}) {
    const StepWhatIf o = apply({"policy=fixed:splits=4", other}, &ctx, "fixed:splits=1");
    ASSERT_TRUE(o.band_us) << other;
    EXPECT_NEAR(*o.band_us, *s.band_us, 1e-9) << other;
    EXPECT_TRUE(o.other_edits()) << other;
  }
  // Before it, edits that leave the attention as measured (no op bytes given) leave the band too.
  for (const char* other : {"gaps=0", "remove=copy"}) {
    const StepWhatIf o = apply({other, "policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
    ASSERT_TRUE(o.band_us) << other;
    EXPECT_NEAR(*o.band_us, *s.band_us, 1e-9) << other;
  }
  // The same edit again changes nothing and adds nothing.
  EXPECT_NEAR(*apply({"policy=fixed:splits=4", "policy=fixed:splits=4"}, &ctx, "fixed:splits=1").band_us, *s.band_us,
              1e-9);
  // Through another plan and back, or to another spec of the same plan: the plan that ran, its attention as
  // measured, and no band.
  const StepWhatIf back = apply({"policy=fixed:splits=4", "policy=fixed:splits=1"}, &ctx, "fixed:splits=1");
  EXPECT_NEAR(attention(back),
              back.before_summary.class_us.at("mla_stage1") + back.before_summary.class_us.at("mla_reduce"), 1e-9);
  EXPECT_FALSE(back.band_us);
  EXPECT_EQ(back.band_basis, "every step runs the plan that ran, its attention as measured");
  const StepWhatIf same = apply({"policy=aiter-v1:experimental=0"}, &ctx, "aiter-v1");
  EXPECT_FALSE(same.band_us);
  EXPECT_EQ(same.band_basis, "every step runs the plan that ran, its attention as measured");
  EXPECT_NE(same.notes[0].find("; the same plan as before, under another spec: no band"), std::string::npos)
      << same.notes[0];
  EXPECT_EQ(same.policy_changes[0].ratio_pairs, 0);
  // No ratio error for the class: no band.
  ctx.gpu.ratio_error.clear();
  EXPECT_FALSE(apply({"policy=fixed:splits=4", "policy=fixed:splits=2"}, &ctx, "fixed:splits=1").band_us);
  // No policy edit, no band and nothing to say.
  const StepWhatIf gaps = apply({"gaps=0"}, &ctx);
  EXPECT_FALSE(gaps.band_us);
  EXPECT_TRUE(gaps.band_basis.empty());
}

// The ratio error is of one query token per request: steps of more have no band, and the edit's line says why.
TEST_F(StepEdits, StepsOfSeveralQueryTokensHaveNoBand) {
  sim::Workload w;
  w.gpu = "h100";
  w.batch = sim::BatchSpec::uniform(16, 8192);
  w.qlen = 2;
  w.heads = 128;
  w.q_dtype = w.kv_dtype = DType::bf16;
  w.page_size = 64;
  sim::WorkloadContext ctx = sim::resolve(w);
  const std::string cls = sim::evaluate("fixed:splits=4", ctx).prediction->metrics.kernel_class;
  ctx.gpu.ratio_error[cls] = RatioError{1.0, 4.0, 40, "test"};
  const StepWhatIf s = apply({"policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  EXPECT_FALSE(s.band_us);
  const std::string why =
      "the ratio error of two plans was measured at one query token per request, and these steps run up to 2";
  EXPECT_EQ(s.band_basis, why);
  EXPECT_NE(s.notes[0].find("; no band: " + why), std::string::npos) << s.notes[0];
  EXPECT_EQ(s.policy_changes[0].ratio_pairs, 0);
  // So was the fuse and remove edits' error.
  const StepWhatIf removal = apply({"remove=copy"}, &ctx);
  EXPECT_FALSE(removal.band_us);
  EXPECT_EQ(removal.band_basis,
            "the remove edits' error was measured at one query token per request, and these steps run up to 2");
}

// Without the event timing's overhead (a profile that did not measure it) the edit scales by the ratio of kernel_us,
// and its line says so; with it, the line gives both parameters.
TEST_F(StepEdits, APolicyEditSaysWhichKernelTimesItCompares) {
  const sim::WorkloadContext ctx = h100_context();
  const StepWhatIf measured = apply({"policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  EXPECT_NE(measured.notes[0].find(fmt::format("kernel_us less the event timing's {:.2f} us and {:.2f} us per kernel",
                                               ctx.params.events_overhead_us, ctx.params.events_kernel_overhead_us)),
            std::string::npos)
      << measured.notes[0];
  sim::WorkloadContext unmeasured = ctx;
  unmeasured.params.events_overhead_us = unmeasured.params.events_kernel_overhead_us = 0;
  const StepWhatIf u = apply({"policy=fixed:splits=4"}, &unmeasured, "fixed:splits=1");
  EXPECT_NE(u.notes[0].find("kernel_us: no event timing overhead measured on h100"), std::string::npos) << u.notes[0];
  const double r = sim::evaluate("fixed:splits=4", ctx).prediction->metrics.kernel_us /
                   sim::evaluate("fixed:splits=1", ctx).prediction->metrics.kernel_us;
  EXPECT_NEAR(u.after_summary.class_us.at("mla_stage1") + u.after_summary.class_us.at("mla_reduce"), 2 * 56.0 * r,
              1e-9);
  // The split plan pays one more kernel's overhead than the unsplit one, so its share of the step is smaller.
  EXPECT_LT(measured.after_summary.class_us.at("mla_stage1") + measured.after_summary.class_us.at("mla_reduce"),
            2 * 56.0 * r);
}

// A split plan after an unsplit one: a reduce follows stage 1, the two sharing the scaled attention by the new
// plan's stage-1 time over its device time (its event overhead comes off the reduce's share).
TEST_F(StepEdits, ANewReduceTakesTheShareOfTheDeviceTimeStageOneLeaves) {
  const sim::WorkloadContext ctx = h100_context();
  const StepWhatIf w = apply({"remove=mla_reduce", "policy=fixed:splits=4"}, &ctx, "fixed:splits=1");
  const sim::Evaluation next = sim::evaluate("fixed:splits=4", ctx);
  const double next_us = device_us("fixed:splits=4", ctx);
  const double attention = 50.0 * next_us / device_us("fixed:splits=1", ctx);
  const double stage1 = attention * next.prediction->metrics.stage1_us / next_us;
  ASSERT_LT(next.prediction->metrics.stage1_us, next_us);
  const auto c = w.after[0].class_us();
  EXPECT_NEAR(c.at("mla_stage1"), 2 * stage1, 1e-9);
  EXPECT_NEAR(c.at("mla_reduce"), 2 * (attention - stage1), 1e-9);
  EXPECT_GT(c.at("mla_reduce"), 0);
}

TEST(StepTrace, LaunchGridsGiveEachStepsBatch) {
  const StepAnalysis a = analyse(chrome_trace(4, 2, {8, 32}).dump());
  ASSERT_EQ(a.steps.size(), 4u);
  EXPECT_EQ(a.steps[0].batch, 8);
  EXPECT_EQ(a.steps[1].batch, 32);
  EXPECT_EQ(a.steps_with_batch, 4);
  EXPECT_EQ(a.batch_source, "grid.x of /rope_kv_write_kernel/");
  // Without grids the steps do not say.
  const StepAnalysis none = analyse(chrome_trace(2, 1).dump());
  EXPECT_EQ(none.steps[0].batch, 0);
  EXPECT_EQ(none.steps_with_batch, 0);
  // rocprofv3 counts work-items: 16 workgroups of 512.
  const std::string csv =
      "Kernel_Name,Start_Timestamp,End_Timestamp,Grid_Size_X,Grid_Size_Y,Grid_Size_Z,Workgroup_Size_X,"
      "Workgroup_Size_Y,Workgroup_Size_Z\n"
      "concat_and_cache_mla_kernel,0,3000,8192,1,1,512,1,1\n"
      "mla_a8w8_qh16_qseqlen1_gqaratio16_ps,4000,54000,256,1,1,256,1,1\n";
  const KernelTrace t = parse_kernel_trace(csv, "r.csv");
  EXPECT_EQ(t.kernels[0].grid[0], 16);
  EXPECT_EQ(t.kernels[1].grid[0], 1);
  const StepAnalysis rocm = analyse_steps(t, load_step_rules("vllm-rocm-aiter"), {});
  EXPECT_EQ(rocm.steps[0].batch, 16);
  EXPECT_TRUE(rocm.batch_counts_tokens);  // vLLM's cache write: one block per query token
}

// A rule set whose batch_from divides the grid; steps with and without a grid in one trace.
StepRules rules_dividing_by(int divide_by, const char* counts = "requests") {
  return step_rules_from_json(R"({"name": "d", "rules": [{"class": "mla_stage1", "match": "mla_decode_"},
                                                         {"class": "mla_reduce", "match": "mla_reduce"}],
                                   "batch_from": {"match": "rope_kv_write", "divide_by": )" +
                                  std::to_string(divide_by) + R"(, "counts": ")" + counts + R"("}})",
                              "d.json");
}

TEST(StepTrace, ABatchThatTheGridDoesNotGiveIsTheFlags) {
  json trace = chrome_trace(3, 1, {12, 8, 6});
  // Step 2's RoPE + KV write loses its grid.
  int seen = 0;
  for (auto& e : trace["traceEvents"])
    if (e["name"] == "rope_kv_write_kernel" && seen++ == 2) e["args"].erase("grid");
  const KernelTrace t = parse_kernel_trace(trace.dump(), "t.json");
  const StepAnalysis a = analyse_steps(t, rules_dividing_by(4), {});
  // 12 / 4 = 3; 8 / 4 = 2; no grid: 0.
  EXPECT_EQ(a.steps[0].batch, 3);
  EXPECT_EQ(a.steps[1].batch, 2);
  EXPECT_EQ(a.steps[2].batch, 0);
  EXPECT_EQ(a.steps_with_batch, 2);
  EXPECT_EQ(a.batch_refused, 0);
  EXPECT_EQ(a.batch_source, "grid.x of /rope_kv_write/ / 4");
  // divide_by 5 divides none of 12 and 8: refused, and counted.
  const StepAnalysis uneven = analyse_steps(t, rules_dividing_by(5), {});
  EXPECT_EQ(uneven.steps[0].batch, 0);
  EXPECT_EQ(uneven.batch_refused, 2);
  // A grid recorded on the launch rather than the kernel (ROCm's tracer) counts too.
  json launch = chrome_trace(1, 1, {});
  for (auto& e : launch["traceEvents"])
    if (e["cat"] == "cuda_runtime" && e["args"]["correlation"] == 3) e["args"]["grid"] = {24, 1, 1};
  EXPECT_EQ(analyse(launch.dump()).steps[0].batch, 24);
}

TEST_F(StepEdits, StepsTakeTheFlagsRequestsRepeatedToTheirBatch) {
  // Tokens over the flags' query tokens per request: 2 per request (MTP), so 12 and 8 tokens are 6 and 4 requests.
  sim::Workload wl;
  wl.gpu = "h100";
  wl.batch = sim::BatchSpec::uniform(16, 8192);
  wl.heads = 128;
  wl.q_dtype = wl.kv_dtype = DType::bf16;
  wl.page_size = 64;
  wl.qlen = 2;
  const sim::WorkloadContext ctx = sim::resolve(wl);
  a = analyse_steps(parse_kernel_trace(chrome_trace(2, 2, {12, 8}).dump(), "t.json"), rules_dividing_by(1, "tokens"),
                    {});
  const StepWhatIf w = apply({"policy=fixed:splits=1"}, &ctx, "aiter-v1");
  EXPECT_EQ(w.step_requests, (std::vector<int>{6, 4}));
  EXPECT_DOUBLE_EQ(w.tokens_per_step, 10);  // (12 + 8) / 2
  sim::WorkloadContext six = ctx;
  six.batch.kv_lens.assign(6, 8192);
  six.batch.qo_lens.assign(6, 2);
  const double r = device_us("fixed:splits=1", six) / device_us("aiter-v1", six);
  const auto c = w.after[0].class_us();
  EXPECT_NEAR(c.at("mla_stage1") + c.at("mla_reduce"), 2 * 56.0 * r, 1e-9);
  // A metadata edit builds each step's own plan: 6 and 4 requests make different plans.
  sim::MetadataCostModel model;
  model.implementations = {{"device-serial", 0.0, 0.0, 1.0, "published", "test"}};
  const std::vector<StepEdit> edits = {parse_step_edit("metadata=device-serial")};
  const StepWhatIf m = apply_step_edits(a, edits, {&ctx, "aiter-v1", &model});
  const auto items = [&](int requests) {
    sim::WorkloadContext c2 = ctx;
    c2.batch.kv_lens.assign(static_cast<size_t>(requests), 8192);
    c2.batch.qo_lens.assign(static_cast<size_t>(requests), 2);
    return static_cast<double>(sim::metadata_items(*sim::evaluate("aiter-v1", c2).plan));
  };
  EXPECT_NEAR(m.after[0].class_us().at("metadata"), items(6), 1e-9);
  EXPECT_NEAR(m.after[1].class_us().at("metadata"), items(4), 1e-9);
  EXPECT_NE(items(6), items(4));
  EXPECT_NE(m.notes[0].find("2 batches"), std::string::npos) << m.notes[0];
}

TEST_F(StepEdits, APolicyEditPredictsEachStepAtItsOwnBatch) {
  a = analyse(chrome_trace(4, 2, {8, 32}).dump());
  const sim::WorkloadContext ctx = h100_context();  // 16 requests of 8192 tokens: the batch the steps replace
  const auto ratio = [&](int requests) {
    sim::WorkloadContext c = ctx;
    c.batch.kv_lens.assign(static_cast<size_t>(requests), 8192);
    c.batch.qo_lens.assign(static_cast<size_t>(requests), 1);
    return device_us("fixed:splits=1", c) / device_us("aiter-v1", c);
  };
  const StepWhatIf w = apply({"policy=fixed:splits=1"}, &ctx, "aiter-v1");
  ASSERT_EQ(w.after.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const double r = ratio(i % 2 == 0 ? 8 : 32);
    const auto c = w.after[i].class_us();
    EXPECT_NEAR(c.at("mla_stage1") + c.at("mla_reduce"), 2 * 56.0 * r, 1e-9) << i;
  }
  EXPECT_NE(ratio(8), ratio(32));
  EXPECT_DOUBLE_EQ(w.tokens_per_step, 20);  // steps of 8 and 32 tokens
  EXPECT_NE(w.notes[0].find("at batch 8:"), std::string::npos) << w.notes[0];
  EXPECT_NE(w.notes[0].find("at batch 32:"), std::string::npos) << w.notes[0];
}

// With each step's own batch from the user (--step-batches), a policy edit plans that batch, contexts and all, in
// place of the flags' contexts at the launch grid's count; steps of equal batches share one plan; a uniform file
// equal to the flags changes nothing; a file of another step count is refused.
TEST_F(StepEdits, StepBatchesGiveEachStepItsOwnContexts) {
  a = analyse(chrome_trace(4, 2, {8, 32}).dump());  // the grids say 8 and 32 requests; the file wins
  const sim::WorkloadContext ctx = h100_context();
  const StepBatches batches = step_batches_from_json(
      R"({"steps": [{"requests": 8, "context": 2048}, {"requests": 8, "context": 8192},
                    {"kv_lens": [1000, 9000, 4096]}, {"requests": 8, "context": 2048}]})",
      "b.json", ctx.batch);
  const auto ratio = [&](const DecodeBatch& b) {
    sim::WorkloadContext c = ctx;
    c.batch = b;
    return device_us("fixed:splits=1", c) / device_us("aiter-v1", c);
  };
  const std::vector<StepEdit> edits = {parse_step_edit("policy=fixed:splits=1")};
  const StepWhatIf w = apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, nullptr, &batches});
  ASSERT_EQ(w.after.size(), 4u);
  EXPECT_EQ(w.step_requests, (std::vector<int>{8, 8, 3, 8}));
  for (size_t i = 0; i < 4; ++i) {
    const auto c = w.after[i].class_us();
    EXPECT_NEAR(c.at("mla_stage1") + c.at("mla_reduce"), 2 * 56.0 * ratio(batches.steps[i]), 1e-9) << i;
  }
  EXPECT_NE(ratio(batches.steps[0]), ratio(batches.steps[1]));
  EXPECT_DOUBLE_EQ(w.tokens_per_step, (8 + 8 + 3 + 8) / 4.0);
  // One figure per different batch, named by the first step that ran it.
  ASSERT_EQ(w.policy_changes.size(), 3u);
  EXPECT_EQ(w.policy_changes[0].batch, "step 0's batch (8 x 2048)");
  EXPECT_EQ(w.policy_changes[2].batch, "step 2's batch (3 requests, 1000 to 9000 KV tokens)");
  EXPECT_EQ(w.policy_changes[2].requests, 3);
  EXPECT_NE(w.notes[0].find("at step 1's batch (8 x 8192):"), std::string::npos) << w.notes[0];
  // The band's basis: a ragged step is wider than the sessions measured; without the file the contexts are the flags'.
  EXPECT_NE(w.band_basis.find("measured on uniform batches"), std::string::npos) << w.band_basis;
  EXPECT_EQ(w.band_basis.find("contexts are the flags'"), std::string::npos) << w.band_basis;
  const StepWhatIf grid_only = apply({"policy=fixed:splits=1"}, &ctx, "aiter-v1");
  EXPECT_NE(grid_only.band_basis.find("the steps' contexts are the flags', which the band takes to be theirs"),
            std::string::npos)
      << grid_only.band_basis;
  // The flags' batch in every entry: the what-if without the file.
  const StepAnalysis plain = analyse(chrome_trace(3, 2).dump());
  const StepBatches same = step_batches_from_json(
      R"({"steps": [{"requests": 16, "context": 8192}, {"requests": 16, "context": 8192},
                    {"requests": 16, "context": 8192}]})",
      "s.json", ctx.batch);
  const StepWhatIf with = apply_step_edits(plain, edits, {&ctx, "aiter-v1", nullptr, nullptr, &same});
  const StepWhatIf without = apply_step_edits(plain, edits, {&ctx, "aiter-v1"});
  EXPECT_DOUBLE_EQ(with.after_summary.time_us, without.after_summary.time_us);
  EXPECT_EQ(with.notes, without.notes);
  // A log's batches, one per step here, are given by their range in the edit's line, each in the figures.
  a = analyse(chrome_trace(12, 1).dump());
  std::string entries;
  for (int i = 0; i < 12; ++i)
    entries += fmt::format("{}{{\"requests\": 16, \"context\": {}}}", i ? ", " : "", 2048 + 512 * i);
  const StepBatches twelve = step_batches_from_json(R"({"steps": [)" + entries + "]}", "t.json", ctx.batch, 12);
  const StepWhatIf many = apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, nullptr, &twelve});
  EXPECT_EQ(many.policy_changes.size(), 12u);
  EXPECT_NE(many.notes[0].find("over 12 batches: "), std::string::npos) << many.notes[0];
  EXPECT_EQ(many.notes[0].find("at step 3's batch"), std::string::npos) << many.notes[0];
  EXPECT_NE(many.notes[0].find("each batch's figures in --format json"), std::string::npos) << many.notes[0];
  a = analyse(chrome_trace(4, 2, {8, 32}).dump());
  // One entry per step of the trace, the skipped ones included.
  const auto e = input_error_of([&] { apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, nullptr, &same}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "step-batches");
  EXPECT_NE(std::string(e->what()).find("3 entries, where the trace has 4 steps"), std::string::npos) << e->what();
}

// A second policy edit scales against the policy the first left running: back to the policy that ran is the
// measured step again, and the same policy twice changes nothing the second time.
TEST_F(StepEdits, PolicyEditsChainFromThePolicyTheStepRuns) {
  const sim::WorkloadContext ctx = h100_context();
  const double measured = apply({}, &ctx).before_summary.class_us.at("mla_stage1");
  const StepWhatIf back = apply({"policy=aiter-v1:max_split_per_batch=2", "policy=aiter-v1"}, &ctx);
  EXPECT_NEAR(back.after_summary.class_us.at("mla_stage1") + back.after_summary.class_us.at("mla_reduce"),
              measured + back.before_summary.class_us.at("mla_reduce"), 1e-9);
  EXPECT_NE(back.notes.back().find("(aiter-v1:max_split_per_batch=2) -> "), std::string::npos) << back.notes.back();
  const StepWhatIf once = apply({"policy=fixed:splits=4"}, &ctx);
  const StepWhatIf twice = apply({"policy=fixed:splits=4", "policy=fixed:splits=4"}, &ctx);
  EXPECT_NEAR(twice.after_summary.time_us, once.after_summary.time_us, 1e-9);
}

// Edits that would leave a step empty or a time beyond any trace's are refused, naming the edit.
TEST_F(StepEdits, EditsThatLeaveNoStepAreRefused) {
  EXPECT_THROW(apply({"remove=re:."}), InputError);
  EXPECT_THROW(apply({"gaps=1e308"}), InputError);
  EXPECT_THROW(apply({"fuse=re:.:us=2e12"}), InputError);
  EXPECT_NO_THROW(apply({"gaps=1e12"}));
}

TEST_F(StepEdits, AMetadataEditPutsTheModelledBuildInTheStep) {
  const sim::WorkloadContext ctx = h100_context();
  sim::MetadataCostModel model;
  model.implementations = {{"device-serial", 2.0, 0.25, 0.5, "published", "test"},
                           {"host", 1.0, 0.0, 0.0, "measured", "test"}};
  const sim::Evaluation e = sim::evaluate("aiter-v1", ctx);
  const double built = 2.0 + 0.25 * e.plan->num_clusters() + 0.5 * sim::metadata_items(*e.plan);
  std::vector<StepEdit> edits = {parse_step_edit("metadata=device-serial")};
  const StepWhatIf w = apply_step_edits(a, edits, {&ctx, "aiter-v1", &model});
  // The trace has no metadata kernel: the build goes first, the kernel that was first waits the median gap (1 us).
  EXPECT_NEAR(w.after_summary.class_us.at("metadata"), built, 1e-9);
  EXPECT_NEAR(w.after_summary.time_us, w.before_summary.time_us + built + 1, 1e-9);
  EXPECT_EQ(w.after.front().kernels.front().kernel_class, "metadata");
  // A second metadata edit replaces the first build; after a policy edit, it builds the new policy's plan.
  edits = {parse_step_edit("metadata=device-serial"), parse_step_edit("policy=fixed:splits=4"),
           parse_step_edit("metadata=host")};
  const StepWhatIf twice = apply_step_edits(a, edits, {&ctx, "aiter-v1", &model});
  EXPECT_NEAR(twice.after_summary.class_us.at("metadata"), 1.0, 1e-9);
  EXPECT_NE(twice.notes.back().find("fixed:splits=4"), std::string::npos) << twice.notes.back();
  // An implementation the model does not know is named.
  edits = {parse_step_edit("metadata=gpu-magic")};
  EXPECT_THROW(apply_step_edits(a, edits, {&ctx, "aiter-v1", &model}), InputError);
}

// The test layer's ops: the q-absorb BMM, the cat, RoPE (per request), the copy, the attention, its reduce, the GEMM.
const char* kLayerBytes = R"({"description": "test layer", "ops": [
  {"match": "re:q_absorb", "read_bytes": 17e6, "written_bytes": 2e6},
  {"match": "re:CatArray", "read_bytes": 2e6, "written_bytes": 2e6},
  {"match": "rope_kv_write", "read_bytes_per_request": 1e4, "written_bytes_per_request": 1e4},
  {"match": "copy", "read_bytes": 16e6, "written_bytes": 16e6},
  {"match": "mla_stage1", "read_bytes": 75e6, "written_bytes": 2e6},
  {"match": "mla_reduce", "read_bytes": 3e6, "written_bytes": 1e6},
  {"match": "other", "read_bytes": 134e6, "written_bytes": 1e5}]})";

// A fuse (by bytes) or remove edit adds each site it changed (a fused run, a removed kernel) times the p90 of that
// kind's measured error per site, where it was measured: with the ops' bytes, at one query token per request. A fuse
// given by its time, a gap or a metadata edit adds nothing and is named.
TEST_F(StepEdits, TheFuseAndRemoveEditsBandIsTheirSitesTimesTheMeasuredError) {
  sim::WorkloadContext ctx = h100_context();
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const auto with_bytes = [&](const std::vector<std::string>& edits, const std::string& ran = "aiter-v1") {
    std::vector<StepEdit> parsed;
    for (const auto& e : edits) parsed.push_back(parse_step_edit(e));
    return apply_step_edits(a, parsed, {&ctx, ran, nullptr, &bytes});
  };
  ctx.gpu.edit_error.clear();
  const StepWhatIf none = with_bytes({"remove=copy"});  // no error measured: no band, and why
  EXPECT_FALSE(none.band_us);
  EXPECT_EQ(none.band_basis, "no error of remove edits measured on h100");
  EXPECT_NE(none.notes[0].find("; no error of remove edits measured on h100"), std::string::npos) << none.notes[0];
  EXPECT_FALSE(with_bytes({"gaps=0"}).band_us);
  EXPECT_EQ(with_bytes({"gaps=0"}).band_basis, "");  // nothing that has a band ran

  ctx.gpu.edit_error["fuse"] = EditError{0.2, 0.5, 12, "test"};
  ctx.gpu.edit_error["remove"] = EditError{0.1, 0.25, 10, "test"};
  // Two layers a step: two copies removed, two q-prep runs fused.
  const StepWhatIf removed = with_bytes({"remove=copy"});
  ASSERT_TRUE(removed.band_us);
  EXPECT_NEAR(*removed.band_us, 2 * 0.25, 1e-12);
  for (double b : removed.band_per_step_us) EXPECT_NEAR(b, 2 * 0.25, 1e-12);
  EXPECT_FALSE(removed.other_edits());
  EXPECT_NE(removed.band_basis.find("(remove: 2.00 removed kernels per step, 0.25 us each, the p90 over 10 edits)"),
            std::string::npos)
      << removed.band_basis;
  EXPECT_NE(removed.notes[0].find("; such an edit's error per site was within 0.25 us in 90 % of 10 remove edits"),
            std::string::npos)
      << removed.notes[0];
  const StepWhatIf both = with_bytes({"fuse=q_prep:bytes=18e6", "remove=copy", "gaps=0"});
  ASSERT_TRUE(both.band_us);
  EXPECT_NEAR(*both.band_us, 2 * 0.5 + 2 * 0.25, 1e-12);
  EXPECT_EQ(both.unbanded_edits, std::vector<std::string>{"gaps=0"});
  EXPECT_TRUE(both.other_edits());
  // A fused kernel of a given time carries the user's error, not ours.
  const StepWhatIf timed = with_bytes({"fuse=q_prep:us=1.5"});
  EXPECT_FALSE(timed.band_us);
  EXPECT_EQ(timed.unbanded_edits, std::vector<std::string>{"fuse=q_prep:us=1.5 (a fused kernel of the time given)"});
  // Without the ops' bytes the attention after keeps its time, which the measured error did not: not in the band.
  const StepWhatIf bare = apply({"remove=copy"}, &ctx);
  EXPECT_FALSE(bare.band_us);
  EXPECT_EQ(bare.band_basis,
            "the remove edits' error was measured with the ops' bytes given (--op-bytes), which weigh the attention "
            "after");
  // One kind measured, the other not: the measured one's part, the other named.
  ctx.gpu.edit_error.erase("fuse");
  const StepWhatIf partial = with_bytes({"fuse=q_prep:bytes=18e6", "remove=copy"});
  ASSERT_TRUE(partial.band_us);
  EXPECT_NEAR(*partial.band_us, 2 * 0.25, 1e-12);
  EXPECT_EQ(partial.unbanded_edits, std::vector<std::string>{"the fuse edits (no error of them measured on h100)"});
  ctx.gpu.edit_error["fuse"] = EditError{0.2, 0.5, 12, "test"};

  // With a policy edit the two parts add, step by step.
  ctx.gpu.ratio_error.clear();
  const std::string cls = sim::evaluate("fixed:splits=4", ctx).prediction->metrics.kernel_class;
  ctx.gpu.ratio_error[cls] = RatioError{1.0, 4.0, 40, "test"};
  const StepWhatIf policy = with_bytes({"policy=fixed:splits=4"}, "fixed:splits=1");
  const StepWhatIf policy_and_remove = with_bytes({"policy=fixed:splits=4", "remove=copy"}, "fixed:splits=1");
  ASSERT_TRUE(policy.band_us);
  ASSERT_TRUE(policy_and_remove.band_us);
  EXPECT_NEAR(*policy_and_remove.band_us, *policy.band_us + 2 * 0.25, 1e-9);
  for (size_t i = 0; i < policy.band_per_step_us.size(); ++i)
    EXPECT_NEAR(policy_and_remove.band_per_step_us[i], policy.band_per_step_us[i] + 2 * 0.25, 1e-9);
  EXPECT_NE(policy_and_remove.band_basis.find("; plus the fuse and remove edits within the p90"), std::string::npos)
      << policy_and_remove.band_basis;
  // A policy edit that leaves every step on the plan that ran adds nothing; the removal's part stands.
  const StepWhatIf same_plan = with_bytes({"policy=fixed:splits=1", "remove=copy"}, "fixed:splits=1");
  ASSERT_TRUE(same_plan.band_us);
  EXPECT_NEAR(*same_plan.band_us, 2 * 0.25, 1e-9);
  EXPECT_EQ(
      same_plan.band_basis.rfind("every step runs the plan that ran, its attention as measured; plus the fuse", 0), 0u)
      << same_plan.band_basis;
  // A policy edit whose part is unknown leaves no band, whatever the others add, and says why.
  ctx.gpu.ratio_error.clear();
  const StepWhatIf unknown = with_bytes({"policy=fixed:splits=4", "remove=copy"}, "fixed:splits=1");
  EXPECT_FALSE(unknown.band_us);
  EXPECT_EQ(unknown.band_basis, "no ratio error of " + cls + " measured on h100");
}

TEST(OpBytes, EachKernelTakesTheFirstMatchingEntryAtTheStepsRequests) {
  const OpBytesRules r = op_bytes_from_json(kLayerBytes, "o.json");
  ASSERT_EQ(r.entries.size(), 7u);
  EXPECT_EQ(r.description, "test layer");
  const std::optional<OpBytes> rope = r.of({"rope_kv_write_kernel", "rope_kv_write", 3, 1, {}}, 16);
  ASSERT_TRUE(rope);
  EXPECT_DOUBLE_EQ(rope->read_mb, 0.16);
  EXPECT_DOUBLE_EQ(rope->written_mb, 0.16);
  EXPECT_DOUBLE_EQ(r.of({"q_absorb_bmm_kernel", "q_prep", 4, 1, {}}, 16)->read_mb, 17);
  EXPECT_FALSE(op_bytes_from_json(R"({"ops": [{"match": "copy", "read_bytes": 1e6}]})", "o.json")
                   .of({"q_absorb_bmm_kernel", "q_prep", 4, 1, {}}, 16));
}

TEST(OpBytes, BadFilesNameTheField) {
  const auto message = [](const std::string& text) {
    const auto e = input_error_of([&] { op_bytes_from_json(text, "o.json"); });
    if (!e) {
      ADD_FAILURE() << text;
      return std::string();
    }
    EXPECT_EQ(e->field(), "op-bytes");
    return std::string(e->what());
  };
  EXPECT_NE(message("{").find("JSON"), std::string::npos);
  EXPECT_NE(message(R"({"ops": []})").find("ops"), std::string::npos);
  EXPECT_NE(message(R"({"ops": [{"match": "attention"}]})").find("ops[0].match"), std::string::npos);
  EXPECT_NE(message(R"({"ops": [{"match": "re:("}]})").find("ops[0].match"), std::string::npos);
  EXPECT_NE(message(R"({"ops": [{"match": "copy", "read_bytes": -1}]})").find("ops[0].read_bytes"), std::string::npos);
  EXPECT_NE(message(R"({"ops": [{"match": "copy", "bytes": 1}]})").find("bytes"), std::string::npos);
  EXPECT_THROW(load_op_bytes("/nonexistent/op_bytes.json"), InputError);
}

// The profile with no kernel class showing the L2 write-back: the prior-writes law alone.
sim::WorkloadContext without_writeback(sim::WorkloadContext ctx) {
  for (const KernelClass& c : kernel_classes())
    set_cost_param(ctx.params, std::string(c.name) + ".writeback_exposure", 0);
  return ctx;
}

TEST_F(StepEdits, RemovingAnOpChangesTheAttentionAfterItByWhatTheOpsWroteAndRead) {
  const sim::WorkloadContext ctx = without_writeback(h100_context());
  const L2PriorWrites law = l2_prior_writes_of(ctx.params);
  ASSERT_TRUE(law.known());
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const std::vector<StepEdit> edits = {parse_step_edit("remove=copy")};
  const StepWhatIf w = apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, &bytes});
  // Before each stage 1: the BMM, the cat, RoPE (16 requests) and the copy (the BMM takes the traffic past the L2);
  // after the removal: the three, then the GEMM of the layer before, or the step's start for the first layer.
  const OpBytes bmm{17, 2}, cat{2, 2}, rope{0.16, 0.16}, copy{16, 16}, gemm{134, 0.1};
  const double before = l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope, copy}, law);
  const double first = l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope}, law);
  const double second = l2_prior_writes_us(std::vector<OpBytes>{gemm, bmm, cat, rope}, law);
  ASSERT_GT(before, first + 0.1);
  EXPECT_NEAR(w.after_summary.class_us.at("mla_stage1"), 2 * 50.0 + (first - before) + (second - before), 1e-9);
  EXPECT_NEAR(w.after_summary.time_us, 2 * 95.0 + 11 + (first - before) + (second - before), 1e-9);
  EXPECT_NE(w.notes[0].find("the 2 stage-1 kernels per step after them"), std::string::npos) << w.notes[0];
  EXPECT_NE(w.notes[0].find("the other kernels after keep their measured times"), std::string::npos) << w.notes[0];
  // A fused kernel given by its bytes takes part; one given by its time has none, and the stage 1s keep theirs.
  const std::vector<StepEdit> fuse = {parse_step_edit("fuse=q_prep:bytes=19e6:written=1e6")};
  const StepWhatIf fw = apply_step_edits(a, fuse, {&ctx, "aiter-v1", nullptr, &bytes});
  const double fused = l2_prior_writes_us(std::vector<OpBytes>{{18, 1}, rope, copy}, law);
  EXPECT_NEAR(fw.after_summary.class_us.at("mla_stage1"), 2 * (50.0 + fused - before), 1e-9);
  const std::vector<StepEdit> by_time = {parse_step_edit("fuse=q_prep:us=5")};
  const StepWhatIf tw = apply_step_edits(a, by_time, {&ctx, "aiter-v1", nullptr, &bytes});
  EXPECT_DOUBLE_EQ(tw.after_summary.class_us.at("mla_stage1"), 100.0);
  EXPECT_NE(tw.notes[0].find("2 stage-1 kernels per step keep their measured times (an op less than 52 MB of "
                             "traffic before them has no bytes in o.json: fused(2 kernels from "
                             "q_absorb_bmm_kernel))"),
            std::string::npos)
      << tw.notes[0];
  // A fuse that takes the attention in changes how many stage 1s a step has: none is weighed, and the line says so.
  const std::vector<StepEdit> swallow = {parse_step_edit("fuse=copy+mla_stage1:bytes=1e8")};
  const StepWhatIf sw = apply_step_edits(a, swallow, {&ctx, "aiter-v1", nullptr, &bytes});
  EXPECT_NE(sw.notes[0].find("2 stage-1 kernels per step before it are not weighed (the edit changed how many"),
            std::string::npos)
      << sw.notes[0];
  // After a policy edit to a split plan the law still applies, and the line says it was fitted to an unsplit one.
  const std::vector<StepEdit> split = {parse_step_edit("policy=fixed:splits=4"), parse_step_edit("remove=copy")};
  const StepWhatIf sp = apply_step_edits(a, split, {&ctx, "fixed:splits=1", nullptr, &bytes});
  EXPECT_NE(sp.notes[1].find("fitted to an unsplit plan, and fixed:splits=4 splits here"), std::string::npos)
      << sp.notes[1];
  const StepWhatIf unsplit = apply_step_edits(a, edits, {&ctx, "fixed:splits=1", nullptr, &bytes});
  EXPECT_EQ(unsplit.notes[0].find("fitted to an unsplit plan"), std::string::npos) << unsplit.notes[0];
  // Without the ops' bytes, or on a GPU without the law, the stage 1s keep their times and the line says why.
  const StepWhatIf none = apply_step_edits(a, edits, {&ctx, "aiter-v1", nullptr, nullptr});
  EXPECT_DOUBLE_EQ(none.after_summary.class_us.at("mla_stage1"), 100.0);
  EXPECT_NE(none.notes[0].find("the ops' bytes are not given (--op-bytes)"), std::string::npos) << none.notes[0];
  sim::WorkloadContext unmeasured = ctx;
  unmeasured.params.l2_prior_writes_us_per_mb = 0;
  unmeasured.params.l2_carry_us_per_mb = 0;  // nor the write-back
  const StepWhatIf u = apply_step_edits(a, edits, {&unmeasured, "aiter-v1", nullptr, &bytes});
  EXPECT_DOUBLE_EQ(u.after_summary.class_us.at("mla_stage1"), 100.0);
  EXPECT_NE(u.notes[0].find("no L2 prior-writes law or write-back measured on h100"), std::string::npos) << u.notes[0];
}

// A class with a prior-writes law of its own (model/l2_prior_writes.h) weighs the ops before its stage 1 with it, at
// the clusters the running plan streams on: the change grows with them; a split plan takes the GPU's law.
TEST_F(StepEdits, AClassWithItsOwnLawWeighsTheOpsAtItsPlansClusters) {
  const auto at_batch = [](int requests) {
    sim::Workload w;
    w.gpu = "h100";
    w.batch = sim::BatchSpec::uniform(requests, 4096);  // aiter-v1 splits none of them
    w.heads = 128;
    w.q_dtype = w.kv_dtype = DType::bf16;
    w.page_size = 64;
    sim::WorkloadContext c = without_writeback(sim::resolve(w));
    set_cost_param(c.params, "wgmma-bf16-pair.prior_writes_us_per_mb_per_cluster", 0.0003);
    set_cost_param(c.params, "wgmma-bf16-pair.prior_writes_rho_mb", 20);
    set_cost_param(c.params, "wgmma-bf16-pair.prior_writes_gamma", 1);
    set_cost_param(c.params, "wgmma-bf16-pair.prior_writes_cap_mb", 60);
    return c;
  };
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const std::vector<StepEdit> edits = {parse_step_edit("remove=copy")};
  // The stage 1s' change after the copy's removal under the class's law at the plan's clusters (as in
  // RemovingAnOpChangesTheAttentionAfterItByWhatTheOpsWroteAndRead), checked against the what-if's.
  const auto change = [&](int requests) {
    const sim::WorkloadContext c = at_batch(requests);
    const sim::Evaluation e = sim::evaluate("aiter-v1", c);
    EXPECT_EQ(e.prediction->metrics.kernel_class, "wgmma-bf16-pair");
    EXPECT_EQ(e.prediction->metrics.num_partials, 0);
    const int clusters = e.prediction->metrics.active_clusters;
    const L2PriorWrites law = l2_prior_writes_of(c.params, KernelClassId::wgmma_bf16_pair, clusters, false);
    const OpBytes bmm{17, 2}, cat{2, 2}, rope{0.01 * requests, 0.01 * requests}, copy{16, 16}, gemm{134, 0.1};
    // The class's cap (60 MB) takes the second layer's window back to the GEMM's writes before the copy too.
    const double before1 = l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope, copy}, law);
    const double before2 = l2_prior_writes_us(std::vector<OpBytes>{gemm, bmm, cat, rope, copy}, law);
    const double first = l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope}, law);
    const double second = l2_prior_writes_us(std::vector<OpBytes>{gemm, bmm, cat, rope}, law);
    const StepWhatIf w = apply_step_edits(a, edits, {&c, "aiter-v1", nullptr, &bytes});
    EXPECT_NEAR(w.after_summary.class_us.at("mla_stage1"), 2 * 50.0 + (first - before1) + (second - before2), 1e-9);
    EXPECT_NE(
        w.notes[0].find(fmt::format("the wgmma-bf16-pair class's own law, on the {} clusters of its plan", clusters)),
        std::string::npos)
        << w.notes[0];
    return std::pair{clusters, (first - before1) + (second - before2)};
  };
  const auto [c16, on16] = change(16);
  const auto [c32, on32] = change(32);
  ASSERT_EQ(c32, 2 * c16);
  ASSERT_LT(on16, -0.1);
  EXPECT_LT(on32, 1.9 * on16);  // twice the clusters: about twice the gain (RoPE's bytes grow a little with them)
  // A split plan takes the GPU's law, and the line says that law was fitted to an unsplit plan.
  const sim::WorkloadContext c = at_batch(16);
  const StepWhatIf split = apply_step_edits(a, edits, {&c, "fixed:splits=4", nullptr, &bytes});
  EXPECT_NE(split.notes[0].find("fitted to an unsplit plan, and fixed:splits=4 splits here"), std::string::npos)
      << split.notes[0];
}

// Where the profile has the copy's law (model/l2_prior_writes.h), a fuse or remove edit changes each copy after the
// ops it changed by that law's change: a fused q prep writes less before the copy.
TEST_F(StepEdits, AFuseChangesTheCopyAfterItByTheCopysLaw) {
  sim::WorkloadContext ctx = without_writeback(h100_context());
  ASSERT_FALSE(l2_copy_prior_writes_of(ctx.params, 16).known());  // the H100 has none measured
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const auto fuse = [&](const std::string& edit, const OpBytesRules* b) {
    return apply_step_edits(a, {parse_step_edit(edit)}, {&ctx, "aiter-v1", nullptr, b});
  };
  const std::string q_prep = "fuse=q_prep:bytes=19e6:written=1e6";
  EXPECT_DOUBLE_EQ(fuse(q_prep, &bytes).after_summary.class_us.at("copy"), 2.0);  // no law: measured
  set_cost_param(ctx.params, "l2_copy_prior_writes_us_per_mb_per_copy_mb", 0.0005);
  set_cost_param(ctx.params, "l2_copy_prior_writes_rho_mb", 30);
  set_cost_param(ctx.params, "l2_copy_prior_writes_gamma", 1);
  set_cost_param(ctx.params, "l2_copy_prior_writes_cap_mb", 100);
  const L2PriorWrites law = l2_copy_prior_writes_of(ctx.params, 16);  // the copy reads 16 MB
  ASSERT_TRUE(law.known());
  // Before each copy: the BMM, the cat and RoPE (16 requests), and in the second layer the GEMM of the first before
  // them (it takes the traffic past the law's cap); after the fuse, the fused kernel in place of the BMM and cat.
  const OpBytes bmm{17, 2}, cat{2, 2}, rope{0.16, 0.16}, gemm{134, 0.1}, fused{18, 1};
  const double change = l2_prior_writes_us(std::vector<OpBytes>{fused, rope}, law) -
                        l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope}, law) +
                        l2_prior_writes_us(std::vector<OpBytes>{gemm, fused, rope}, law) -
                        l2_prior_writes_us(std::vector<OpBytes>{gemm, bmm, cat, rope}, law);
  ASSERT_LT(change, -0.01);
  const StepWhatIf w = fuse(q_prep, &bytes);
  EXPECT_NEAR(w.after_summary.class_us.at("copy"), 2.0 + change, 1e-9);
  EXPECT_NE(w.notes[0].find(fmt::format("the 2 copies per step after them {:+.2f} us each", change / 2)),
            std::string::npos)
      << w.notes[0];
  EXPECT_NE(w.notes[0].find("l2_copy_prior_writes, docs/step.md §3"), std::string::npos) << w.notes[0];
  // Without the ops' bytes the copies keep their measured times; a removed copy has nothing left to change.
  EXPECT_DOUBLE_EQ(fuse(q_prep, nullptr).after_summary.class_us.at("copy"), 2.0);
  const StepWhatIf removed = fuse("remove=copy", &bytes);
  EXPECT_DOUBLE_EQ(removed.after_summary.class_us.at("copy"), 0);
  EXPECT_EQ(removed.notes[0].find("copies per step"), std::string::npos) << removed.notes[0];
  // An op before a copy without bytes leaves it its measured time, and the line says which.
  const OpBytesRules partial = op_bytes_from_json(
      R"({"description": "no RoPE", "ops": [{"match": "re:q_absorb", "read_bytes": 17e6, "written_bytes": 2e6},
          {"match": "re:CatArray", "read_bytes": 2e6, "written_bytes": 2e6},
          {"match": "copy", "read_bytes": 16e6, "written_bytes": 16e6}]})",
      "p.json");
  const StepWhatIf unknown = fuse(q_prep, &partial);
  EXPECT_DOUBLE_EQ(unknown.after_summary.class_us.at("copy"), 2.0);
  EXPECT_NE(unknown.notes[0].find("2 copies per step keep their measured times (the copy or an op within 100 MB of "
                                  "traffic before it has no bytes in p.json: rope_kv_write_kernel)"),
            std::string::npos)
      << unknown.notes[0];
}

// Where the stage 1's class shows the write-back (the H100's 128-head kernel, a fifth of the curve's answer), each
// stage 1 also takes the change of what its plan pays for the MB left dirty before it.
TEST_F(StepEdits, RemovingAnOpChangesTheWritebackTheAttentionPays) {
  const sim::WorkloadContext ctx = h100_context();
  const sim::L2Writeback wb = sim::l2_writeback_of(ctx.params, ctx.gpu);
  ASSERT_TRUE(wb.known());
  ASSERT_GT(ctx.params.resolved(KernelClassId::wgmma_bf16_pair).writeback_exposure, 0.0);
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const StepWhatIf with = apply_step_edits(a, {parse_step_edit("remove=copy")}, {&ctx, "aiter-v1", nullptr, &bytes});
  const sim::WorkloadContext law_only = without_writeback(ctx);
  const StepWhatIf without =
      apply_step_edits(a, {parse_step_edit("remove=copy")}, {&law_only, "aiter-v1", nullptr, &bytes});
  const sim::Evaluation e = sim::evaluate("aiter-v1", ctx);
  const auto paid = [&](std::vector<OpBytes> ops) {
    return sim::l2_writeback_us(*e.plan, ctx.batch, ctx.gpu, ctx.params, sim::l2_dirty_before_mb(ops, wb), wb);
  };
  const OpBytes bmm{17, 2}, cat{2, 2}, rope{0.16, 0.16}, copy{16, 16}, gemm{134, 0.1};
  const double before = paid({bmm, cat, rope, copy}), first = paid({bmm, cat, rope}),
               second = paid({gemm, bmm, cat, rope});
  ASSERT_GT(before, first + 0.05);
  EXPECT_NEAR(with.after_summary.class_us.at("mla_stage1"),
              without.after_summary.class_us.at("mla_stage1") + (first - before) + (second - before), 1e-9);
  EXPECT_NE(with.notes[0].find("its write-back"), std::string::npos) << with.notes[0];
}

// A policy edit weighs the write-back of what the ops before each stage 1 left dirty under both plans: the measured
// stage 1 paid the plan that ran (and the ratio scaled that with it), the new one pays its own.
TEST_F(StepEdits, APolicyEditWeighsTheWritebackUnderBothPlans) {
  const sim::WorkloadContext ctx = h100_context();
  const sim::L2Writeback wb = sim::l2_writeback_of(ctx.params, ctx.gpu);
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const std::vector<StepEdit> edit = {parse_step_edit("policy=fixed:splits=4")};
  const StepWhatIf with = apply_step_edits(a, edit, {&ctx, "aiter-v1", nullptr, &bytes});
  const sim::WorkloadContext law_only = without_writeback(ctx);
  const StepWhatIf without = apply_step_edits(a, edit, {&law_only, "aiter-v1", nullptr, &bytes});
  const sim::Evaluation ran = sim::evaluate("aiter-v1", ctx), next = sim::evaluate("fixed:splits=4", ctx);
  const auto device_us = [&](const sim::Evaluation& e) {
    return sim::trace_device_us(e.prediction->metrics, ctx.params,
                                sim::plan_kernels(*e.plan, sim::kernel_batch(*e.plan, ctx.batch)));
  };
  const double r = device_us(next) / device_us(ran);
  // Both layers' stage 1s follow the BMM, the cat, RoPE and the copy (the BMM takes the traffic past the L2).
  const double dirty = sim::l2_dirty_before_mb(std::vector<OpBytes>{{17, 2}, {2, 2}, {0.16, 0.16}, {16, 16}}, wb);
  const auto paid = [&](const sim::Evaluation& e) {
    return sim::l2_writeback_us(*e.plan, ctx.batch, ctx.gpu, ctx.params, dirty, wb);
  };
  ASSERT_GT(paid(next), paid(ran));  // 64 CUs streaming against 16
  EXPECT_NEAR(with.after_summary.class_us.at("mla_stage1") - without.after_summary.class_us.at("mla_stage1"),
              2 * (paid(next) - r * paid(ran)), 1e-9);
  EXPECT_NE(with.notes[0].find("for the write-back of what the ops before them left dirty"), std::string::npos)
      << with.notes[0];
  // Without the ops' bytes the line says it is not weighed.
  const StepWhatIf no_bytes = apply_step_edits(a, edit, {&ctx, "aiter-v1", nullptr, nullptr});
  EXPECT_NE(no_bytes.notes[0].find("left dirty in L2 is not weighed (the ops' bytes are not given"), std::string::npos)
      << no_bytes.notes[0];
}

// Where the ops' file does not name the attention's kernels, they move what their plan does, and after a policy
// edit what the new plan does (a predicted reduce included), so a later edit weighs the plan that now runs.
TEST_F(StepEdits, TheAttentionsKernelsMoveTheirPlansBytes) {
  const sim::WorkloadContext ctx = h100_context();
  const OpBytesRules bytes = op_bytes_from_json(R"({"ops": [{"match": "re:q_absorb", "read_bytes": 17e6,
    "written_bytes": 2e6}, {"match": "copy", "read_bytes": 16e6, "written_bytes": 16e6}]})",
                                                "o.json");
  const auto plan_bytes = [&](const std::string& policy) {
    return sim::attention_bytes(*sim::evaluate(policy, ctx).plan, ctx.batch);
  };
  const auto stage1_and_reduce = [](const StepWhatIf& w) {
    std::vector<const StepKernel*> out;
    for (const StepKernel& k : w.after.front().kernels)
      if (k.kernel_class == "mla_stage1" || k.kernel_class == "mla_reduce") out.push_back(&k);
    return out;
  };
  const StepWhatIf removed = apply_step_edits(a, {parse_step_edit("remove=copy")}, {&ctx, "aiter-v1", nullptr, &bytes});
  const sim::AttentionBytes ran = plan_bytes("aiter-v1");
  for (const StepKernel* k : stage1_and_reduce(removed)) {
    ASSERT_TRUE(k->bytes) << k->name;
    EXPECT_DOUBLE_EQ(k->bytes->read_mb, k->kernel_class == "mla_stage1" ? ran.stage1_read_mb : ran.reduce_read_mb);
  }
  const StepWhatIf split =
      apply_step_edits(a, {parse_step_edit("policy=fixed:splits=4"), parse_step_edit("remove=copy")},
                       {&ctx, "aiter-v1", nullptr, &bytes});
  const sim::AttentionBytes next = plan_bytes("fixed:splits=4");
  ASSERT_GT(next.reduce_written_mb, 0.0);
  int reduces = 0;
  for (const StepKernel* k : stage1_and_reduce(split)) {
    ASSERT_TRUE(k->bytes) << k->name;
    const bool stage1 = k->kernel_class == "mla_stage1";
    reduces += !stage1;
    EXPECT_DOUBLE_EQ(k->bytes->written_mb, stage1 ? next.stage1_written_mb : next.reduce_written_mb) << k->name;
  }
  EXPECT_GT(reduces, 0);
  // Without the file nothing gets bytes.
  const StepWhatIf none = apply_step_edits(a, {parse_step_edit("remove=copy")}, {&ctx, "aiter-v1", nullptr, nullptr});
  for (const StepKernel* k : stage1_and_reduce(none)) EXPECT_FALSE(k->bytes) << k->name;
}

// With the ops' bytes, a fused kernel given by its bytes streams as the run's largest op did in the trace.
TEST_F(StepEdits, AFusedKernelGivenByItsBytesStreamsAsTheRunsLargestOpDid) {
  const sim::WorkloadContext ctx = h100_context();
  const OpBytesRules bytes = op_bytes_from_json(kLayerBytes, "o.json");
  const std::vector<StepEdit> fuse = {parse_step_edit("fuse=q_prep:bytes=19e6:written=1e6")};
  const StepWhatIf w = apply_step_edits(a, fuse, {&ctx, "aiter-v1", nullptr, &bytes});
  // The BMM (17 MB read, 2 MB written, the run's largest) ran 4 us; the cat (4 MB) does not set the ratio.
  const double ratio = 4.0 / stream_kernel_time_us(ctx.params, 19e6, 2e6);
  ASSERT_LT(ratio, 0.6);
  // Less what the H100's validation runs' fuses gained beyond that cost and the L2 laws, per run.
  const double offset = ctx.params.step_fuse_offset_us;
  ASSERT_GT(offset, 0.0);
  const double fused = ratio * stream_kernel_time_us(ctx.params, 19e6, 1e6) - offset;
  EXPECT_NEAR(w.after_summary.class_us.at("q_prep"), 2 * fused, 1e-9);
  EXPECT_NE(w.notes[0].find(fmt::format("one kernel of {:.2f} us each", fused)), std::string::npos) << w.notes[0];
  EXPECT_NE(w.notes[0].find(fmt::format(", less {:.2f} us: what the validation runs' fuses gained beyond that and the "
                                        "L2 laws (the median per run, step_fuse_offset_us)",
                                        offset)),
            std::string::npos)
      << w.notes[0];
  EXPECT_NE(
      w.notes[0].find(fmt::format("times {:.3f} on average over the trace's 6 runs: the measured time of each run's op "
                                  "that moves the most bytes (q_absorb_bmm_kernel, 19 MB)",
                                  ratio)),
      std::string::npos)
      << w.notes[0];
  // Without the ops' bytes the stream cost stands, with no offset (the runs measured it with them); a kernel given
  // by its time keeps it.
  const StepWhatIf bare = apply_step_edits(a, fuse, {&ctx, "aiter-v1", nullptr, nullptr});
  EXPECT_NEAR(bare.after_summary.class_us.at("q_prep"), 2 * stream_kernel_time_us(ctx.params, 19e6, 1e6), 1e-9);
  const StepWhatIf timed =
      apply_step_edits(a, {parse_step_edit("fuse=q_prep:us=5")}, {&ctx, "aiter-v1", nullptr, &bytes});
  EXPECT_DOUBLE_EQ(timed.after_summary.class_us.at("q_prep"), 10.0);
  // Runs whose ops have no bytes keep the stream cost, and the line says so.
  const OpBytesRules copy_only = op_bytes_from_json(R"({"ops": [{"match": "copy", "read_bytes": 1e6}]})", "c.json");
  const StepWhatIf unknown = apply_step_edits(a, fuse, {&ctx, "aiter-v1", nullptr, &copy_only});
  EXPECT_NEAR(unknown.after_summary.class_us.at("q_prep"), 2 * stream_kernel_time_us(ctx.params, 19e6, 1e6), 1e-9);
  EXPECT_NE(unknown.notes[0].find("no op of the run has bytes (--op-bytes), so the stream kernel's cost stands"),
            std::string::npos)
      << unknown.notes[0];
  EXPECT_EQ(unknown.notes[0].find("step_fuse_offset_us"), std::string::npos) << unknown.notes[0];
}

// Kernels an edit puts in the step take their bytes from the file too, and per-request bytes follow each step's
// batch.
TEST_F(StepEdits, KernelsAnEditAddsAndEachStepsBatchTakeTheirBytes) {
  const sim::WorkloadContext ctx = without_writeback(h100_context());
  const L2PriorWrites law = l2_prior_writes_of(ctx.params);
  sim::MetadataCostModel model;
  model.implementations = {{"host", 1.0, 0.0, 0.0, "measured", "test"}};
  std::string with_metadata = kLayerBytes;
  with_metadata.insert(with_metadata.find(R"({"match": "re:q_absorb")"),
                       R"({"match": "metadata", "read_bytes": 1e5},)");
  const OpBytesRules bytes = op_bytes_from_json(with_metadata, "o.json");
  // The metadata build goes first in each step, before the first layer's BMM: with its bytes, every stage 1 is
  // weighed.
  const std::vector<StepEdit> edits = {parse_step_edit("metadata=host"), parse_step_edit("remove=copy")};
  const StepWhatIf w = apply_step_edits(a, edits, {&ctx, "aiter-v1", &model, &bytes});
  EXPECT_NE(w.notes[1].find("the 2 stage-1 kernels per step after them"), std::string::npos) << w.notes[1];
  EXPECT_EQ(w.notes[1].find("keep their measured times (an op"), std::string::npos) << w.notes[1];
  // Steps of 8, 16 and 32 requests: RoPE's bytes per request move what the copy's removal changes.
  const StepAnalysis batches = analyse(chrome_trace(3, 1, {8, 16, 32}).dump());
  const OpBytesRules per_request =
      op_bytes_from_json(R"({"ops": [{"match": "re:q_absorb", "read_bytes": 17e6, "written_bytes": 2e6},
    {"match": "re:CatArray", "read_bytes": 2e6, "written_bytes": 2e6},
    {"match": "rope_kv_write", "read_bytes_per_request": 1e5, "written_bytes_per_request": 5e5},
    {"match": "copy", "read_bytes": 16e6, "written_bytes": 16e6}]})",
                         "o.json");
  const std::vector<StepEdit> remove = {parse_step_edit("remove=copy")};
  const StepWhatIf r = apply_step_edits(batches, remove, {&ctx, "aiter-v1", nullptr, &per_request});
  ASSERT_EQ(r.after.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const double n = std::vector<double>{8, 16, 32}[i];
    const OpBytes bmm{17, 2}, cat{2, 2}, rope{0.1 * n, 0.5 * n}, copy{16, 16};
    const double change = l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope}, law) -
                          l2_prior_writes_us(std::vector<OpBytes>{bmm, cat, rope, copy}, law);
    EXPECT_NEAR(r.after[i].class_us().at("mla_stage1"), 50.0 + change, 1e-9) << i;
  }
  EXPECT_GT(std::abs(r.after[0].class_us().at("mla_stage1") - r.after[2].class_us().at("mla_stage1")), 0.01);
}

TEST(StepEditParsing, BadEditsAreNamed) {
  for (const std::string bad :
       {"fuse=q_prep", "fuse=q_prep:us=0", "fuse=q_prep:us=1:bytes=2", "fuse=q_prep:us=1:written=0",
        "fuse=q_prep:bytes=2:written=3", "fuse=q_prep:bytes=2:written=-1", "fuse=q_prep:written=1:bytes=2",
        "remove=attention", "remove=", "gaps=-1", "policy=", "bogus=1", "fuse", "remove=re:(",
        "metadata=", "policy=foo", "policy=aiter-v1:bogus=1"}) {
    const auto e = input_error_of([&] { parse_step_edit(bad); });
    EXPECT_TRUE(e) << bad;
    if (e) {
      EXPECT_EQ(e->field(), "edit") << bad;
    }
  }
  // A selector names the forms it may take; a regex stands alone.
  const auto message = [](const std::string& edit) {
    const auto e = input_error_of([&] { parse_step_edit(edit); });
    return e ? std::string(e->what()) : std::string();
  };
  EXPECT_NE(message("remove=attention").find("SEL must be a step class (q_prep, "), std::string::npos);
  EXPECT_NE(message("remove=attention").find(") or re:REGEX, got 'attention'"), std::string::npos);
  EXPECT_NE(message("fuse=copy+re:foo:us=1").find("a re:REGEX selector stands alone"), std::string::npos);
  EXPECT_EQ(parse_step_edit("remove=re:a+b").selectors, (std::vector<std::string>{"re:a+b"}));
  const StepEdit e = parse_step_edit("fuse=q_prep+copy:bytes=1e6");
  EXPECT_EQ(e.selectors, (std::vector<std::string>{"q_prep", "copy"}));
  EXPECT_DOUBLE_EQ(*e.bytes, 1e6);
  EXPECT_FALSE(e.written);
  const StepEdit rw = parse_step_edit("fuse=q_prep:bytes=1e6:written=2.5e5");
  EXPECT_EQ(rw.selectors, (std::vector<std::string>{"q_prep"}));
  EXPECT_DOUBLE_EQ(*rw.bytes, 1e6);
  EXPECT_DOUBLE_EQ(*rw.written, 2.5e5);
  EXPECT_DOUBLE_EQ(*parse_step_edit("fuse=q_prep:bytes=1e6:written=0").written, 0);
}

}  // namespace
}  // namespace mlasim::validate
