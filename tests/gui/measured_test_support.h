#pragma once
// Shared by the GUI tests of measured timelines: a measured timeline made from the explorer's own check of its
// plan (validate::testing::timeline_from_prediction), with known errors put in, written as the Chrome-trace file
// `mlasim validate --timeline` writes.
#include <QFile>
#include <QString>
#include <algorithm>

#include "../validate/timeline_from_prediction.h"
#include "gui_test_support.h"
#include "mlasim/validate/timeline_comparison.h"

namespace mlasim::gui::testing {

// 16 x 8192 tokens, bf16 on pages of 64, on an H100, planned by aiter-v1: splits, partials and a reduce.
inline validate::MeasuredTimeline measured_seed() {
  validate::MeasuredTimeline t;
  t.workload.gpu = "h100";
  t.workload.batch = sim::BatchSpec::uniform(16, 8192);
  t.workload.q_dtype = DType::bf16;
  t.workload.kv_dtype = DType::bf16;
  t.workload.page_size = 64;
  t.policy = "aiter-v1";
  t.kernel = "mla_decode_wgmma_persistent+mla_reduce";
  t.device = "NVIDIA H100 80GB HBM3";
  return t;
}

// CU ids as the GPU numbers them need not follow the simulator's rows: row r ran on SM 131 - r.
inline int measured_cu_of_row(int row) { return 131 - row; }

struct MeasuredExample {
  validate::MeasuredTimeline timeline;
  int too_fast_work = -1;  // measured twice as long as predicted: the prediction is too fast (error -50 %)
  int too_slow_work = -1;  // measured in 2/3 of the predicted time: the prediction is too slow (error +50 %)
};

// The prediction check_measured_timeline makes of the seed's plan, played back as a measurement, on reversed CU
// ids, with one work made slower and one faster than predicted (each the last work on its CU, so no run
// overlaps another).
inline MeasuredExample measured_example() {
  validate::MeasuredTimeline seed = measured_seed();
  seed.works.push_back({0, 0, 0, 0, 0, 1});  // any work: the check needs one to compare
  const validate::TimelineCheck check = validate::check_measured_timeline(seed);
  MeasuredExample ex;
  ex.timeline = validate::testing::timeline_from_prediction(*check.evaluation.plan, *check.evaluation.prediction);
  ex.timeline.workload = seed.workload;
  ex.timeline.policy = seed.policy;
  ex.timeline.kernel = seed.kernel;
  ex.timeline.device = seed.device;
  const auto& rows = check.evaluation.prediction->timeline.rows;
  std::vector<int> busy_rows;
  for (size_t r = 0; r < rows.size(); ++r)
    if (!rows[r].empty()) busy_rows.push_back(static_cast<int>(r));
  ex.too_fast_work = rows[static_cast<size_t>(busy_rows[0])].back().work;
  ex.too_slow_work = rows[static_cast<size_t>(busy_rows[1])].back().work;
  for (validate::MeasuredWork& w : ex.timeline.works) {
    if (w.work == ex.too_fast_work) w.end_us = w.begin_us + 2 * (w.end_us - w.begin_us);
    if (w.work == ex.too_slow_work) w.end_us = w.begin_us + (w.end_us - w.begin_us) * 2 / 3;
    w.first_kv_us = std::min(w.first_kv_us, w.end_us);
    w.cu = measured_cu_of_row(w.cu);
  }
  return ex;
}

inline QString write_measured_timeline(const QString& name, const validate::MeasuredTimeline& t) {
  const QString path = output_path(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  f.write(QByteArray::fromStdString(validate::measured_timeline_to_json(t).dump(1)));
  return path;
}

}  // namespace mlasim::gui::testing
