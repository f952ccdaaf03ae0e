// DeepSeek-V4's two scopes through the one evaluation path: one pass plans exactly the top-k batch of its streams,
// a merged run plans a stream per scope and adds the LSE merge after the reduce, every sparse-capable policy plans
// every layer kind within the plan contract, and the workload's JSON carries the scopes.
#include <gtest/gtest.h>

#include <algorithm>

#include "mlasim/model/gathered_rows.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/plan_checks.h"
#include "mlasim/sim/simulator.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/sim/workload.h"
#include "policy_plan_checks.h"
#include "sim_test_support.h"
#include "support/input_error_of.h"

namespace mlasim::sim {
namespace {

using mlasim::testing_support::input_error_of;
using testing::gpu;
using testing::plan;

DecodeBatch scoped(int batch, int context, const std::string& layer, TwoScopes::Run run, int heads = 16, int qlen = 1) {
  DecodeBatch b = DecodeBatch::uniform(batch, context, qlen);
  b.q_heads = heads;
  b.scopes = TwoScopes::preset(layer);
  b.scopes.run = run;
  return b;
}

TEST(TwoScopePlans, OnePassIsThePlanOfItsStreamsAsATopkBatch) {
  DecodeBatch b = scoped(8, 65536, "csa", TwoScopes::Run::one_pass);
  b.kv_lens = {65536, 300, 5, 4096, 65536, 128, 1024, 9000};
  const DecodeBatch streams = scope_stream_batch(b, GatheredRows::selected);
  for (const std::string spec : {"aiter-v1", "aiter-v1:max_split_per_batch=16", "fixed:splits=4"}) {
    const Plan p = plan(spec, b);
    const Plan q = plan(spec, streams);
    EXPECT_EQ(p.works, q.works) << spec;
    EXPECT_EQ(p.reduce_partial_map, q.reduce_partial_map) << spec;
    EXPECT_TRUE(check_plan(p, b).empty()) << spec;
    const Metrics m = simulate_metrics(p, b, gpu("mi355x"), cost_params_for(gpu("mi355x")));
    EXPECT_EQ(m, simulate_metrics(q, streams, gpu("mi355x"), cost_params_for(gpu("mi355x")))) << spec;
  }
}

TEST(TwoScopePlans, MergedRunsEachScopeAsAStreamAndMergesTheTokensAfterTheReduce) {
  const DecodeBatch b = scoped(32, 65536, "csa", TwoScopes::Run::merged);
  const Plan p = plan("aiter-v1", b);
  EXPECT_EQ(p.num_requests, 64);  // the window stream and the compressed stream of each token
  EXPECT_TRUE(check_plan(p, b).empty());
  const CostParams params = cost_params_for(gpu("mi355x"));
  const Prediction merged = simulate(p, b, gpu("mi355x"), params);
  // The same plan over the streams without the merge: what the merge adds.
  DecodeBatch no_merge = scope_stream_batch(b, GatheredRows::selected);
  no_merge.merge_token.clear();
  const Prediction streams = simulate(p, no_merge, gpu("mi355x"), params);
  EXPECT_DOUBLE_EQ(merged.metrics.stage1_us, streams.metrics.stage1_us);
  EXPECT_GT(merged.metrics.kernel_us, streams.metrics.kernel_us);
  EXPECT_DOUBLE_EQ(merged.metrics.total_us - merged.metrics.kernel_us,
                   streams.metrics.total_us - streams.metrics.kernel_us + params.reduce_launch_us);
  EXPECT_GT(merged.metrics.read_bytes, streams.metrics.read_bytes);
  int merge_boxes = 0;
  std::vector<int> tokens;
  for (const ReduceBox& r : merged.timeline.reduce) {
    if (!r.scope_merge) continue;
    ++merge_boxes;
    EXPECT_GE(r.begin_us, streams.timeline.end_us());
    EXPECT_LE(r.end_us, merged.timeline.end_us() + 1e-9);
    EXPECT_EQ(r.partials, 2);
    tokens.push_back(r.tile);
  }
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  EXPECT_EQ(tokens.size(), 32u);  // every token has both scopes at this context
  EXPECT_GT(merge_boxes, 0);
  EXPECT_DOUBLE_EQ(merged.timeline.end_us(), merged.metrics.kernel_us);
}

TEST(TwoScopePlans, ASlidingWindowLayerHasNothingToMerge) {
  const DecodeBatch b = scoped(16, 4096, "swa", TwoScopes::Run::merged);
  const CostParams params = cost_params_for(gpu("mi355x"));
  const Prediction merged = simulate(plan("aiter-v1", b), b, gpu("mi355x"), params);
  DecodeBatch one_pass = b;
  one_pass.scopes.run = TwoScopes::Run::one_pass;
  EXPECT_EQ(merged.metrics, simulate(plan("aiter-v1", one_pass), one_pass, gpu("mi355x"), params).metrics);
  EXPECT_TRUE(std::none_of(merged.timeline.reduce.begin(), merged.timeline.reduce.end(),
                           [](const ReduceBox& r) { return r.scope_merge; }));
}

TEST(TwoScopePlans, EverySparseCapablePolicyPlansEveryLayerKind) {
  for (const std::string on : {"mi355x", "h100"})
    for (const std::string spec : {"aiter-v1", "aiter-v1:max_split_per_batch=16", "aiter-v1-adaptive",
                                   "aiter-nonpersistent", "fixed:splits=8", "flashmla:scheduler=2026"})
      for (const std::string layer : {"csa", "hca", "swa"})
        for (const TwoScopes::Run run : {TwoScopes::Run::one_pass, TwoScopes::Run::merged})
          for (const int heads : {16, 128}) {
            if (spec.rfind("flashmla", 0) == 0 && on != "h100") continue;
            DecodeBatch b = scoped(4, 20000, layer, run, heads, 2);
            b.kv_lens = {20000, 130, 3, 100000};
            const std::string what = on + " " + spec + " " + layer + " " + std::string(scope_run_name(run)) + " " +
                                     std::to_string(heads) + " heads";
            const Plan p = plan(spec, b, on);
            EXPECT_TRUE(check_plan(p, b).empty()) << what;
            const Prediction pr = simulate(p, b, gpu(on), cost_params_for(gpu(on)));
            EXPECT_GT(pr.metrics.kernel_us, 0) << what;
            EXPECT_DOUBLE_EQ(pr.timeline.end_us(), pr.metrics.kernel_us) << what;
          }
}

TEST(TwoScopePlans, APolicyWithoutASparsePathNamesTheScopes) {
  const auto e =
      input_error_of([&] { plan("flashinfer-mla", scoped(4, 4096, "csa", TwoScopes::Run::one_pass), "h100"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field(), "dsv4");
}

TEST(TwoScopeWorkloads, ScopesRoundTripThroughJsonAndReachTheBatch) {
  Workload w;
  w.scopes = TwoScopes::preset("hca");
  w.scopes.run = TwoScopes::Run::merged;
  const nlohmann::json j = workload_to_json(w);
  EXPECT_EQ(j.at("dsv4").at("compress_ratio"), 128);
  EXPECT_EQ(workload_from_json(j), w);
  EXPECT_EQ(w.make_batch().scopes, w.scopes);
  // A layer kind names its preset.
  nlohmann::json by_kind = j;
  by_kind["dsv4"] = "csa";
  EXPECT_EQ(workload_from_json(by_kind).scopes, TwoScopes::preset("csa"));
  const auto field_of = [](const nlohmann::json& bad) {
    const auto e = input_error_of([&] { workload_from_json(bad); });
    return e ? e->field() : std::string();
  };
  nlohmann::json bad = j;
  bad["dsv4"] = "mla";
  EXPECT_EQ(field_of(bad), "workload.dsv4");
  bad["dsv4"] = {{"window", 128}, {"compress_ratio", 1}};
  EXPECT_EQ(field_of(bad), "workload.dsv4.compress_ratio");
  bad["dsv4"] = {{"compress_ratio", 4}};
  EXPECT_EQ(field_of(bad), "workload.dsv4.window");
  bad["dsv4"] = {{"window", 128}, {"run", "twice"}};
  EXPECT_EQ(field_of(bad), "workload.dsv4.run");
  bad["dsv4"] = {{"window", 128}, {"sink", true}};
  EXPECT_EQ(field_of(bad), "workload.dsv4.sink");
}

}  // namespace
}  // namespace mlasim::sim
