#pragma once
// The measured lane: a measured timeline as timeline boxes, one row per CU that ran work (by CU id), each work
// from its begin to its end with its first KV issue as the end of the fixed part, and the measured reduce blocks
// in its reduce lane. The painter colours its works by the prediction's duration error.
#include "mlasim/gui/measured_check.h"
#include "mlasim/gui/timeline_scene.h"

namespace mlasim::gui {

TimelineLane make_measured_lane(const MeasuredCheck& measured);

// The pair `mlasim-gui --render MEASURED.json` draws: the measured lane above the lane "predicted", the
// simulator's timeline of the same plan (measured.check->evaluation), on one time axis.
TimelineScene make_measured_scene(const MeasuredCheck& measured);

}  // namespace mlasim::gui
