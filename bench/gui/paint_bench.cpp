// Speed targets of the policy explorer (issue 5): painting a 256-cluster timeline within a frame (<= 16 ms)
// and an edit turned into a new picture (re-plan + simulate + paint) within 50 ms at batch 256.
// Runs on Qt's offscreen platform: `mlasim_gui_bench` needs no display.
#include <QApplication>
#include <QImage>
#include <QPainter>
#include <benchmark/benchmark.h>
#include <cstdlib>
#include <random>

#include "mlasim/gui/main_window.h"
#include "mlasim/gui/policy_panel.h"
#include "mlasim/gui/timeline_painter.h"
#include "mlasim/gui/timeline_scene.h"
#include "mlasim/gui/timeline_view.h"
#include "mlasim/sim/evaluation.h"

namespace {

using namespace mlasim;
using namespace mlasim::gui;

const QSize kWindow(1600, 1000);  // the timeline's share of a full-HD window

// A timeline of `clusters` rows holding `works` boxes in all, of uneven lengths, for `requests` requests, with one
// reduce box per request: the shape of a real plan, at sizes the planners rarely reach.
TimelineScene synthetic_scene(int clusters, int works, int requests) {
  auto plan = std::make_shared<sim::Plan>();
  auto prediction = std::make_shared<sim::Prediction>();
  plan->num_requests = requests;
  plan->derived.num_clusters = clusters;
  plan->derived.qk_batch_ratio = 1;
  sim::Timeline& tl = prediction->timeline;
  tl.num_clusters = clusters;
  tl.rows.resize(static_cast<size_t>(clusters));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> length(0.5, 1.5);
  const int per_cluster = works / clusters;
  double stage1 = 0;
  for (int c = 0; c < clusters; ++c) {
    double t = 0;
    for (int i = 0; i < per_cluster; ++i) {
      const int w = c * per_cluster + i;
      const int request = static_cast<int>(static_cast<int64_t>(w) * requests / works);
      const double d = length(rng) * 100.0 / per_cluster;
      tl.rows[static_cast<size_t>(c)].push_back({t, t + d / 4, t + d, w, request, 0, 1, i % 3 != 0});
      plan->works.push_back(sim::WorkInfo{request, i % 3 != 0 ? w : -1, 0, 1, 0, 1, 0, 0});
      t += d;
    }
    stage1 = std::max(stage1, t);
  }
  for (int r = 0; r < requests; ++r) tl.reduce.push_back({stage1, stage1 + 2.0, r, r, 4, 0, r % clusters, r, true});
  tl.stage1_us = stage1;
  tl.reduce_us = 2.0;
  return make_scene({make_lane("A", {"synthetic", plan, prediction})});
}

void paint_fit(benchmark::State& state, const TimelineScene& scene) {
  QImage image(kWindow, QImage::Format_ARGB32_Premultiplied);
  TimelineStyle style;
  style.font.setPixelSize(11);
  const TimelineViewport vp{kWindow, 0, scene.end_us * 1.02, 0};
  for (auto _ : state) {
    QPainter painter(&image);
    TimelinePainter::paint(painter, scene, vp, style);
    painter.end();
    benchmark::DoNotOptimize(image.constBits());
  }
}

// 256 clusters, state.range(0) works in all (2000: a large decode plan; 512000: 2000 per cluster).
void BM_PaintTimeline(benchmark::State& state) {
  const TimelineScene scene = synthetic_scene(256, static_cast<int>(state.range(0)), 256);
  paint_fit(state, scene);
  state.counters["boxes"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_PaintTimeline)->ArgName("works")->Arg(2000)->Arg(512000)->Unit(benchmark::kMillisecond);

sim::Scenario batch_scenario(int batch, int context) {
  sim::Scenario s;
  s.workload.batch.count = batch;
  s.workload.batch.context = context;
  return s;
}

// The README scenario's real A/B picture, and the same pair at batch 256.
void BM_PaintScenario(benchmark::State& state) {
  const sim::Scenario s = batch_scenario(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const auto ctx = std::make_shared<const sim::WorkloadContext>(sim::resolve(s.workload));
  const sim::Evaluation a = sim::evaluate(s.policies[0].spec, *ctx), b = sim::evaluate(s.policies[1].spec, *ctx);
  const TimelineScene scene = make_scene(&a, &b);
  paint_fit(state, scene);
  state.counters["works"] = a.plan->num_works() + b.plan->num_works();
}
BENCHMARK(BM_PaintScenario)
    ->ArgNames({"batch", "context"})
    ->Args({4, 100000})
    ->Args({256, 8192})
    ->Unit(benchmark::kMillisecond);

// An edit to picture, as the window does it: read the workload, plan and simulate A and B, build the scene, paint.
// Each iteration changes A's split cap so nothing is reused from the previous one but the GPU profile.
void BM_EditToPicture(benchmark::State& state) {
  sim::Scenario s = batch_scenario(256, static_cast<int>(state.range(0)));
  QImage image(kWindow, QImage::Format_ARGB32_Premultiplied);
  TimelineStyle style;
  style.font.setPixelSize(11);
  int msb = 1;
  size_t works = 0;
  for (auto _ : state) {
    s.policies[0].spec = "aiter-v1:max_split_per_batch=" + std::to_string(msb);
    msb = msb % 16 + 1;
    const auto ctx = std::make_shared<const sim::WorkloadContext>(sim::resolve(s.workload));
    const sim::Evaluation a = sim::evaluate(s.policies[0].spec, *ctx), b = sim::evaluate(s.policies[1].spec, *ctx);
    const TimelineScene scene = make_scene(&a, &b);
    QPainter painter(&image);
    TimelinePainter::paint(painter, scene, TimelineViewport{kWindow, 0, scene.end_us * 1.02, 0}, style);
    painter.end();
    benchmark::DoNotOptimize(image.constBits());
    works = static_cast<size_t>(a.plan->num_works() + b.plan->num_works());
  }
  state.counters["works"] = static_cast<double>(works);
}
BENCHMARK(BM_EditToPicture)->ArgName("context")->Arg(4096)->Arg(32768)->Arg(131072)->Unit(benchmark::kMillisecond);

// The same through the window: a knob edit re-plans synchronously (metrics, tables, scene), then the timeline's
// viewport paints (grab() runs its paintEvent into a pixmap).
void BM_EditToPictureWindow(benchmark::State& state) {
  MainWindow window;
  window.resize(1900, 1100);
  window.show();
  window.set_scenario(batch_scenario(256, static_cast<int>(state.range(0))));
  int msb = 1;
  double recompute_ms = 0;
  int failures = 0;
  for (auto _ : state) {
    window.policy_panel(0)->set_knob_text("max_split_per_batch", QString::number(msb));
    msb = msb % 16 + 1;
    recompute_ms += window.last_update_ms();
    failures += window.side(0)->source == window.policy_panel(0)->spec() ? 0 : 1;
    benchmark::DoNotOptimize(window.timeline_view()->viewport()->grab());
  }
  state.counters["recompute_ms"] = recompute_ms / std::max<double>(1, static_cast<double>(state.iterations()));
  state.counters["failed_edits"] = failures;
}
BENCHMARK(BM_EditToPictureWindow)->ArgName("context")->Arg(4096)->Arg(32768)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("QT_QPA_PLATFORM") == nullptr) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
