#pragma once
// The explorer's short texts: axis ticks, lane titles, tooltips and the uplift line. Metric values come from
// the shared formatter (sim/metrics_format.h); only what is particular to the pictures lives here.
#include <QString>

#include "mlasim/gui/timeline_painter.h"
#include "mlasim/gui/validation_plots.h"
#include "mlasim/sim/simulator.h"

namespace mlasim::gui {

// A time with a precision that suits its size: "0.85 µs", "45.2 µs", "1234 µs".
QString format_us(double us);
// A tick label on an axis whose ticks are `step_us` apart: just enough decimals to tell ticks apart.
QString format_tick_us(double t_us, double step_us);

// The figures next to a lane's title: "kernel 155.2 µs (stage 1 150.1 + reduce 5.1) · 64/256 CUs · 64 works, 64
// partials".
QString lane_summary(const sim::Metrics& m, int rows);

// The line above a measured lane: kernel, device, measured stage 1 and reduce, CUs with work, works, and the
// kernel time without the instrumentation.
QString measured_lane_title(const TimelineLane& lane);

// "B vs A: 1.87x faster in kernel time (+87%)", or "slower"; empty when either side is missing.
QString uplift_text(double speedup);

// The tooltip of the box a hit-test found: the work's fields and its predicted times; on a measured lane its
// measured begin, first KV issue and end, its predicted begin and end and the duration error.
QString box_tooltip(const TimelineScene& scene, const TimelineLayout::Hit& hit);

// The tooltip of a validation point: its row's line, policy, batch, context, heads, qlen, dtypes, page size,
// clusters and kernel class, the measured and predicted kernel time and the error.
QString validation_tooltip(const validate::PreparedRow& row, const ValidationPoint& point);

}  // namespace mlasim::gui
