#pragma once
// Predicted against measured time, log-log with y = x and the +-10 % / +-20 % bands, one colour per kernel class:
// the axes, the drawing and the hit-test shared by the headless PNG (validation_scatter) and the interactive
// Validation tab, so the picture and the widget cannot drift apart.
#include <QColor>
#include <QPainter>
#include <QRectF>
#include <QSize>
#include <string>
#include <vector>

#include "mlasim/gui/validation_plots.h"

namespace mlasim::gui {

// The colour of a kernel class, fixed so the same class has the same colour in every picture.
QColor kernel_class_color(const std::string& kernel_class);

// Where everything goes in a picture of `size`: both axes span the decades around every measured and predicted
// time, the plot area leaves room for the tick labels on the left and below and the legend on the right.
class ScatterLayout {
 public:
  static constexpr double kPointRadius = 3.2;

  ScatterLayout(const std::vector<ValidationPoint>& points, QSize size, double top = 50);

  const QRectF& area() const { return area_; }
  double lo_us() const { return lo_; }
  double hi_us() const { return hi_; }
  double x_of(double measured_us) const;
  double y_of(double predicted_us) const;
  QPointF position(const ValidationPoint& p) const { return {x_of(p.measured_us), y_of(p.predicted_us)}; }

  // The point nearest `pos` within `radius` pixels, else -1. Of points at the same distance the later one wins:
  // it is drawn on top.
  int hit_test(const std::vector<ValidationPoint>& points, QPointF pos, double radius = 6) const;

 private:
  double lo_ = 1, hi_ = 10;
  QRectF area_;
};

// Draws bands, y = x, decades, axis titles, the points and the legend (classes with their row counts). `selected`
// (an index into `points`, -1 for none) is drawn opaque with a ring around it.
void paint_validation_scatter(QPainter& p, const std::vector<ValidationPoint>& points, const ScatterLayout& layout,
                              int selected = -1);

}  // namespace mlasim::gui
