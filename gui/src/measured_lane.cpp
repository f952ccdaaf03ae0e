#include "mlasim/gui/measured_lane.h"

#include <algorithm>
#include <tuple>

#include "mlasim/gui/text_format.h"

namespace mlasim::gui {

TimelineLane make_measured_lane(const MeasuredCheck& measured) {
  const validate::MeasuredTimeline& m = *measured.timeline;
  auto facts = std::make_shared<MeasuredLaneFacts>();
  facts->timeline = measured.timeline;
  facts->check = measured.check;
  for (const validate::MeasuredWork& w : m.works) facts->row_cu.push_back(w.cu);
  std::sort(facts->row_cu.begin(), facts->row_cu.end());
  facts->row_cu.erase(std::unique(facts->row_cu.begin(), facts->row_cu.end()), facts->row_cu.end());
  const auto& comparisons = measured.check->comparison.works;
  for (size_t i = 0; i < comparisons.size(); ++i) {
    const size_t work = static_cast<size_t>(comparisons[i].work);
    if (work >= facts->comparison_of_work.size()) facts->comparison_of_work.resize(work + 1, -1);
    facts->comparison_of_work[work] = static_cast<int>(i);
  }

  auto boxes = std::make_shared<sim::Timeline>();
  boxes->rows.resize(facts->row_cu.size());
  boxes->num_clusters = static_cast<int>(facts->row_cu.size());
  for (const validate::MeasuredWork& w : m.works) {
    const size_t row =
        static_cast<size_t>(std::lower_bound(facts->row_cu.begin(), facts->row_cu.end(), w.cu) - facts->row_cu.begin());
    boxes->rows[row].push_back(
        {w.begin_us, w.first_kv_us, w.end_us, w.work, w.request, w.kv_start, w.kv_end, w.partial});
  }
  TimelineLane lane;
  for (auto& row : boxes->rows) {
    std::sort(row.begin(), row.end(), [](const sim::TimelineBox& a, const sim::TimelineBox& b) {
      return std::tie(a.begin_us, a.work) < std::tie(b.begin_us, b.work);
    });
    std::vector<double> running;
    double latest = 0;
    for (const sim::TimelineBox& b : row) running.push_back(latest = std::max(latest, b.end_us));
    lane.running_end.push_back(std::move(running));
  }
  for (const validate::MeasuredReduceBlock& b : m.reduce) {
    sim::ReduceBox r;
    r.begin_us = b.begin_us;
    r.end_us = b.end_us;
    r.tile = b.block;
    r.request = -1;  // a reduce block's items are not in the file: no request to colour it by
    r.block = b.block;
    r.cu = b.cu;
    boxes->reduce.push_back(r);
  }
  boxes->stage1_us = m.stage1_end_us();
  boxes->reduce_us = m.end_us() - boxes->stage1_us;

  lane.kind = LaneKind::measured;
  lane.name = QStringLiteral("measured");
  lane.source = QString::fromStdString(m.policy);
  lane.plan = measured.check->evaluation.plan;
  lane.reduce_lines = reduce_lines_of(boxes->reduce);
  lane.boxes = std::move(boxes);
  lane.measured = std::move(facts);
  lane.title = measured_lane_title(lane);
  return lane;
}

TimelineScene make_measured_scene(const MeasuredCheck& measured) {
  return make_scene({make_measured_lane(measured), make_lane(QStringLiteral("predicted"), measured.check->evaluation)});
}

}  // namespace mlasim::gui
