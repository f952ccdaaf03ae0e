#pragma once
// What the timeline draws: one lane per side (A above B) on one time axis, each with a row per cluster and
// a reduce lane after stage 1. Built once per evaluation; the painter and the view only read it.
#include <QString>
#include <memory>
#include <vector>

#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {

struct TimelineLane {
  QString name;    // "A", "B"
  QString source;  // the policy spec, or "imported: FILE"
  QString title;   // the line above the lane: source and predicted times
  std::shared_ptr<const sim::Plan> plan;
  std::shared_ptr<const sim::Prediction> prediction;
  // Reduce boxes that overlap in time go to different lines (greedy interval partitioning); each line lists
  // indices into Timeline::reduce by begin time.
  std::vector<std::vector<int>> reduce_lines;

  const sim::Timeline& timeline() const { return prediction->timeline; }
  int num_rows() const { return static_cast<int>(prediction->timeline.rows.size()); }
  int num_reduce_lines() const { return static_cast<int>(reduce_lines.size()); }
};

// The reduce lane is at most this many line heights tall; more lines share the height (thinner lines).
inline constexpr int kMaxReduceLines = 32;

struct TimelineScene {
  std::vector<TimelineLane> lanes;
  double end_us = 0;     // the latest end of any lane
  int num_requests = 0;  // the most requests of any lane (sizes the colour table)
};

// A lane for one side; `name` is "A" or "B".
TimelineLane make_lane(const QString& name, const sim::Evaluation& side);
TimelineScene make_scene(std::vector<TimelineLane> lanes);

// The scene of a comparison: lanes for the sides that have a result, A first.
TimelineScene make_scene(const sim::Evaluation* a, const sim::Evaluation* b);

}  // namespace mlasim::gui
