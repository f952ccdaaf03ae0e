#include "mlasim/gui/timeline_scene.h"

#include <numeric>
#include <queue>

#include "mlasim/gui/text_format.h"

namespace mlasim::gui {

const validate::WorkComparison* MeasuredLaneFacts::comparison(int work) const {
  if (work < 0 || static_cast<size_t>(work) >= comparison_of_work.size()) return nullptr;
  const int index = comparison_of_work[static_cast<size_t>(work)];
  return index < 0 ? nullptr : &check->comparison.works[static_cast<size_t>(index)];
}

double MeasuredLaneFacts::duration_error_pct(int work) const {
  const validate::WorkComparison* c = comparison(work);
  return c ? c->duration_error_pct() : 0.0;
}

std::vector<std::vector<int>> reduce_lines_of(const std::vector<sim::ReduceBox>& reduce) {
  // Greedy interval partitioning: boxes by begin, each to the line that frees up first, if it is free by then.
  std::vector<int> order(reduce.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return reduce[x].begin_us < reduce[y].begin_us; });
  using Free = std::pair<double, int>;  // (end of the line's last box, line)
  std::priority_queue<Free, std::vector<Free>, std::greater<>> free_at;
  std::vector<std::vector<int>> lines;
  for (int i : order) {
    int line = -1;
    if (!free_at.empty() && free_at.top().first <= reduce[i].begin_us) {
      line = free_at.top().second;
      free_at.pop();
    } else {
      line = static_cast<int>(lines.size());
      lines.emplace_back();
    }
    lines[line].push_back(i);
    free_at.push({reduce[i].end_us, line});
  }
  return lines;
}

TimelineLane make_lane(const QString& name, const sim::Evaluation& side) {
  TimelineLane lane;
  lane.name = name;
  lane.plan = side.plan;
  // The lane shares the prediction and points at its timeline.
  lane.boxes = std::shared_ptr<const sim::Timeline>(side.prediction, &side.prediction->timeline);
  lane.source = QString::fromStdString(side.source);
  lane.title = name + "  " + lane.source + "   " +
               lane_summary(side.prediction->metrics, static_cast<int>(side.prediction->timeline.rows.size()));
  lane.reduce_lines = reduce_lines_of(side.prediction->timeline.reduce);
  return lane;
}

TimelineScene make_scene(std::vector<TimelineLane> lanes) {
  TimelineScene scene;
  scene.lanes = std::move(lanes);
  for (const auto& lane : scene.lanes) {
    scene.end_us = std::max(scene.end_us, lane.timeline().end_us());
    for (const auto& row : lane.timeline().rows)
      for (auto it = row.rbegin(); it != row.rend(); ++it) {
        scene.end_us = std::max(scene.end_us, it->end_us);
        if (lane.running_end.empty()) break;  // rows that never overlap end with their last box
      }
    for (const auto& r : lane.timeline().reduce) scene.end_us = std::max(scene.end_us, r.end_us);
    scene.num_requests = std::max(scene.num_requests, lane.plan->num_requests);
    for (const auto& r : lane.timeline().reduce) scene.num_requests = std::max(scene.num_requests, r.request + 1);
  }
  return scene;
}

TimelineScene make_scene(const sim::Evaluation* a, const sim::Evaluation* b) {
  std::vector<TimelineLane> lanes;
  if (a && a->prediction) lanes.push_back(make_lane("A", *a));
  if (b && b->prediction) lanes.push_back(make_lane("B", *b));
  return make_scene(std::move(lanes));
}

}  // namespace mlasim::gui
