#pragma once
// What the timeline draws: one lane per side (A above B) on one time axis, each with a row per cluster and
// a reduce lane after stage 1; with a measured timeline open, its measured lane (one row per CU that ran work)
// comes first. Built once per evaluation; the painter and the view only read it.
#include <QString>
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "mlasim/sim/evaluation.h"
#include "mlasim/validate/measured_timeline.h"
#include "mlasim/validate/timeline_comparison.h"

namespace mlasim::gui {

enum class LaneKind {
  predicted,  // the simulator's timeline of a plan: boxes coloured by request
  measured,   // a measured timeline of the same plan: boxes coloured by the prediction's error
};

// What a measured lane knows beyond its boxes: the file, its check against the prediction of its plan, and which
// CU each row shows.
struct MeasuredLaneFacts {
  std::shared_ptr<const validate::MeasuredTimeline> timeline;
  std::shared_ptr<const validate::TimelineCheck> check;
  std::vector<int> row_cu;              // row r shows CU row_cu[r]; ascending
  std::vector<int> comparison_of_work;  // index into check->comparison.works by work, -1 for none

  // The comparison of `work` with its prediction, or nullptr when the timeline did not measure it.
  const validate::WorkComparison* comparison(int work) const;
  // Its duration error in % (+: predicted too slow); 0 for a work without a comparison.
  double duration_error_pct(int work) const;
};

struct TimelineLane {
  LaneKind kind = LaneKind::predicted;
  QString name;    // "A", "B", "predicted", "measured"
  QString source;  // the policy spec, or "imported: FILE"
  QString title;   // the line above the lane: source and predicted (or measured) times
  std::shared_ptr<const sim::Plan> plan;
  // The boxes the lane draws: the prediction's timeline, or for a measured lane the measured runs in the same
  // form (rows are the CUs of MeasuredLaneFacts::row_cu, stream_us is the first KV issue), so layout, hit-test
  // and export read both kinds alike.
  std::shared_ptr<const sim::Timeline> boxes;
  // Reduce boxes that overlap in time go to different lines (greedy interval partitioning); each line lists
  // indices into Timeline::reduce by begin time.
  std::vector<std::vector<int>> reduce_lines;
  // Rows whose boxes may overlap (measured: two workgroups on one CU at once) have unsorted ends; for them this
  // holds per row the latest end of boxes 0..i, which is sorted, for the searches below. Empty otherwise.
  std::vector<std::vector<double>> running_end;
  std::shared_ptr<const MeasuredLaneFacts> measured;  // measured lanes only

  const sim::Timeline& timeline() const { return *boxes; }
  int num_rows() const { return static_cast<int>(boxes->rows.size()); }
  int num_reduce_lines() const { return static_cast<int>(reduce_lines.size()); }

  // The first box of `row` at or after `from` for which `ends_before(end_us)` is false, where `ends_before` is
  // true for early ends and false from some end on (binary search; correct where boxes overlap too).
  template <class EndsBefore>
  size_t skip_ended(int row, size_t from, EndsBefore ends_before) const {
    const auto& row_boxes = boxes->rows[static_cast<size_t>(row)];
    if (running_end.empty())
      return static_cast<size_t>(
          std::partition_point(row_boxes.begin() + static_cast<std::ptrdiff_t>(from), row_boxes.end(),
                               [&](const sim::TimelineBox& b) { return ends_before(b.end_us); }) -
          row_boxes.begin());
    const auto& ends = running_end[static_cast<size_t>(row)];
    return static_cast<size_t>(
        std::partition_point(ends.begin() + static_cast<std::ptrdiff_t>(from), ends.end(), ends_before) - ends.begin());
  }
};

// The reduce lane is at most this many line heights tall; more lines share the height (thinner lines).
inline constexpr int kMaxReduceLines = 32;

struct TimelineScene {
  std::vector<TimelineLane> lanes;
  double end_us = 0;     // the latest end of any lane
  int num_requests = 0;  // the most requests of any lane (sizes the colour table)
};

// A lane for one side; `name` is "A" or "B" (or "predicted" beside a measured lane).
TimelineLane make_lane(const QString& name, const sim::Evaluation& side);
TimelineScene make_scene(std::vector<TimelineLane> lanes);

// The scene of a comparison: lanes for the sides that have a result, A first.
TimelineScene make_scene(const sim::Evaluation* a, const sim::Evaluation* b);

// Greedy interval partitioning of reduce boxes into lines (TimelineLane::reduce_lines).
std::vector<std::vector<int>> reduce_lines_of(const std::vector<sim::ReduceBox>& reduce);

}  // namespace mlasim::gui
