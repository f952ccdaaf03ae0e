#pragma once
// The one timeline painter: the window's TimelineView and the headless export (PNG, SVG) both call it, so the
// picture on screen and the one in a file are the same. QtGui only; draws on any QPaintDevice.
#include <QColor>
#include <QFont>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <optional>

#include "mlasim/gui/timeline_scene.h"

namespace mlasim::gui {

struct TimelineStyle {
  int row_height = 3;         // pixels per cluster row
  int reduce_row_height = 3;  // pixels per reduce line
  int header_width = 150;     // the left column with lane and row labels
  int axis_height = 24;       // the time axis along the top (stays put when scrolling)
  int title_height = 20;      // the line above each lane
  int reduce_gap = 6;         // between a lane's cluster rows and its reduce lines
  int lane_gap = 14;          // between lanes
  int right_margin = 16;
  int selected_request = -1;  // -1: none; else its boxes keep their colour and every other box fades
  bool text = true;           // labels (off for text-free pixel comparisons)
  bool hatch = true;          // hatch split fragments over their lighter fill (SVG export: fill only)
  QFont font;
  QColor background{255, 255, 255};
  QColor header_background{246, 246, 248};
  QColor grid{228, 228, 232};
  QColor ink{40, 40, 48};
  QColor stage_marker{120, 120, 130};
};

// The visible window: the device size, the time range across the plot and how far the rows are scrolled.
struct TimelineViewport {
  QSize size;
  double t0_us = 0;
  double t1_us = 1;
  int scroll_y = 0;  // content pixels above the top of the visible rows
};

// Base colour of a request's boxes; requests 0-9 take a qualitative palette, later ones golden-angle hues.
QColor request_color(int request);
// Fill of a split fragment (partial output): the request's colour lightened; the painter hatches it too.
QColor partial_fill(int request);
// A colour faded towards the background, for boxes of requests other than the selected one.
QColor faded(const QColor& c, const QColor& background);

// The diverging scale of a measured work's duration error (+: predicted too slow): blue where the prediction is
// too fast, pale grey where it is right, red where it is too slow; clamped at +-kErrorScalePct and taken in steps
// of kErrorStepPct, so boxes still batch per colour.
inline constexpr double kErrorScalePct = 50;
inline constexpr double kErrorStepPct = 5;
inline constexpr int kErrorSteps = 21;  // -50 %, -45 %, ..., +50 %
// The step of `error_pct`: 0 (-50 % or less) .. kErrorSteps / 2 (within +-2.5 %) .. kErrorSteps - 1 (+50 % or more).
int error_step(double error_pct);
QColor error_color(double error_pct);
// The fixed part of a measured work (begin to first KV issue): its error colour darkened.
QColor error_fixed_color(double error_pct);
// A measured reduce block (the file does not say which request it merged).
QColor measured_reduce_color();

// The geometry shared by painting and hit-testing.
class TimelineLayout {
 public:
  TimelineLayout(const TimelineScene& scene, const TimelineStyle& style, const TimelineViewport& viewport);

  // Rows, reduce lines and gaps of every lane, below the axis, in content pixels.
  int content_height() const { return content_height_; }
  // The device height that shows every row without scrolling.
  int full_height() const { return style_.axis_height + content_height_; }
  QRectF plot_rect() const;  // where boxes go: right of the header, below the axis
  double x_of(double t_us) const;
  double t_of(double x) const;
  // Device y of a lane's title line, of its cluster row `row`, and of its reduce line `line`.
  double title_top(int lane) const;
  double row_top(int lane, int row) const;
  double reduce_top(int lane, int line) const;
  // Height of one reduce line of `lane` (fractional when the lane holds more than kMaxReduceLines lines).
  double reduce_line_height(int lane) const;
  // Height of the whole reduce lane.
  int reduce_lane_height(int lane) const;

  struct Hit {
    int lane = 0;
    bool reduce = false;
    int row = 0;    // cluster row, or reduce line
    int index = 0;  // box index in the cluster row, or index into Timeline::reduce
  };
  // The box under a device point, if any (boxes narrower than 3 px are found within 2 px).
  std::optional<Hit> hit_test(QPointF point) const;

 private:
  struct LaneY {
    int title = 0, rows = 0, reduce = 0;
  };
  const TimelineScene& scene_;
  TimelineStyle style_;
  TimelineViewport viewport_;
  std::vector<LaneY> lanes_;
  int content_height_ = 0;
};

class TimelinePainter {
 public:
  // Draws `scene` into `viewport` (from the device's top-left corner). Boxes are batched per colour and
  // boxes narrower than a pixel merge with their neighbours, so the cost follows the pixels, not the works.
  static void paint(QPainter& painter, const TimelineScene& scene, const TimelineViewport& viewport,
                    const TimelineStyle& style);
};

}  // namespace mlasim::gui
