#include "mlasim/gui/validation_scatter.h"

#include <QPolygonF>
#include <algorithm>
#include <cmath>
#include <map>

namespace mlasim::gui {
namespace {

// Where v falls in [lo, hi] on a log scale, 0..1.
double log_fraction(double v, double lo, double hi) {
  return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
}

}  // namespace

QColor kernel_class_color(const std::string& kernel_class) {
  static const std::map<std::string, QColor> colors = {
      {"wgmma-bf16", QColor(31, 119, 180)},     {"wgmma-bf16-pair", QColor(214, 39, 40)},
      {"wgmma-fp8", QColor(44, 160, 44)},       {"portable-fp8", QColor(255, 127, 14)},
      {"portable-bf16", QColor(148, 103, 189)}, {"wgmma-fp8-onepass", QColor(23, 190, 207)},
      {"unknown", QColor(127, 127, 127)}};
  const auto it = colors.find(kernel_class);
  return it == colors.end() ? QColor(127, 127, 127) : it->second;
}

ScatterLayout::ScatterLayout(const std::vector<ValidationPoint>& points, QSize size, double top) {
  double lo = 1e30, hi = 0;
  for (const ValidationPoint& v : points) {
    lo = std::min({lo, v.measured_us, v.predicted_us});
    hi = std::max({hi, v.measured_us, v.predicted_us});
  }
  if (points.empty()) lo = 1, hi = 10;
  lo_ = std::pow(10.0, std::floor(std::log10(lo)));
  hi_ = std::pow(10.0, std::ceil(std::log10(hi)));
  if (hi_ <= lo_) hi_ = lo_ * 10;  // every time a power of ten: still one decade wide
  // Left: tick labels; below: ticks and the axis title; right: the legend. A small widget keeps a 1-pixel area.
  area_ = QRectF(80, top, std::max(1, size.width() - 320), std::max(1.0, size.height() - top - 70));
}

double ScatterLayout::x_of(double measured_us) const {
  return area_.left() + log_fraction(measured_us, lo_, hi_) * area_.width();
}

double ScatterLayout::y_of(double predicted_us) const {
  return area_.bottom() - log_fraction(predicted_us, lo_, hi_) * area_.height();
}

int ScatterLayout::hit_test(const std::vector<ValidationPoint>& points, QPointF pos, double radius) const {
  int best = -1;
  double best_d2 = radius * radius;
  for (size_t i = 0; i < points.size(); ++i) {
    const QPointF d = position(points[i]) - pos;
    const double d2 = d.x() * d.x() + d.y() * d.y();
    if (d2 <= best_d2) best = static_cast<int>(i), best_d2 = d2;
  }
  return best;
}

void paint_validation_scatter(QPainter& p, const std::vector<ValidationPoint>& points, const ScatterLayout& layout,
                              int selected) {
  QFont f = p.font();
  f.setPixelSize(13);
  f.setBold(false);
  p.setFont(f);
  const QRectF& area = layout.area();
  const double lo = layout.lo_us(), hi = layout.hi_us();
  const auto at = [&layout](double measured, double predicted) {
    return QPointF(layout.x_of(measured), layout.y_of(predicted));
  };
  // Bands first, so the points draw over them: +-20 % light, +-10 % darker, y = x.
  for (const auto& [band, shade] : {std::pair{0.2, 235}, std::pair{0.1, 215}}) {
    QPolygonF poly;
    poly << at(lo, lo * (1 - band)) << at(hi / (1 + band), hi) << at(hi, hi) << at(hi, hi * (1 - band)) << at(lo, lo);
    QPolygonF upper;
    upper << at(lo, lo) << at(lo, lo * (1 + band)) << at(hi / (1 + band), hi) << at(hi, hi);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(shade, shade, shade));
    p.drawPolygon(poly);
    p.drawPolygon(upper);
  }
  p.setPen(QPen(Qt::black, 1));
  p.drawLine(at(lo, lo), at(hi, hi));
  // Decades on both axes.
  p.setBrush(Qt::NoBrush);
  p.drawRect(area);
  for (double d = lo; d <= hi * 1.001; d *= 10) {
    p.setPen(QPen(QColor(200, 200, 200), 1, Qt::DotLine));
    p.drawLine(QPointF(layout.x_of(d), area.top()), QPointF(layout.x_of(d), area.bottom()));
    p.drawLine(QPointF(area.left(), layout.y_of(d)), QPointF(area.right(), layout.y_of(d)));
    p.setPen(Qt::black);
    const QString label = QString::number(d, 'g', 6);
    p.drawText(QRectF(layout.x_of(d) - 40, area.bottom() + 4, 80, 18), Qt::AlignHCenter, label);
    p.drawText(QRectF(area.left() - 76, layout.y_of(d) - 9, 70, 18), Qt::AlignRight | Qt::AlignVCenter, label);
  }
  p.drawText(QRectF(area.left(), area.bottom() + 26, area.width(), 20), Qt::AlignHCenter, "measured kernel_us");
  p.save();
  p.translate(18, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-area.height() / 2, -10, area.height(), 20), Qt::AlignHCenter, "predicted kernel_us");
  p.restore();
  std::map<std::string, int> counts;
  for (const ValidationPoint& v : points) {
    ++counts[v.kernel_class];
    QColor c = kernel_class_color(v.kernel_class);
    c.setAlpha(170);
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawEllipse(layout.position(v), ScatterLayout::kPointRadius, ScatterLayout::kPointRadius);
  }
  if (selected >= 0 && static_cast<size_t>(selected) < points.size()) {
    const ValidationPoint& v = points[static_cast<size_t>(selected)];
    p.setBrush(kernel_class_color(v.kernel_class));
    p.setPen(QPen(Qt::black, 2));
    p.drawEllipse(layout.position(v), 6.0, 6.0);
  }
  // Legend: classes with their row counts, and the bands.
  double ly = area.top() + 6;
  p.setPen(Qt::NoPen);
  for (const auto& [name, n] : counts) {
    p.setBrush(kernel_class_color(name));
    p.drawEllipse(QPointF(area.right() + 24, ly + 8), 5, 5);
    p.setPen(Qt::black);
    p.drawText(QPointF(area.right() + 36, ly + 13), QString::fromStdString(name) + QStringLiteral(" (%1)").arg(n));
    p.setPen(Qt::NoPen);
    ly += 22;
  }
  p.setPen(Qt::black);
  p.drawText(QPointF(area.right() + 18, ly + 20), QStringLiteral("bands: +-10 %, +-20 %"));
}

}  // namespace mlasim::gui
