#include "mlasim/gui/step_picture.h"

#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <map>

namespace mlasim::gui {
namespace {

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `ticks` ticks over `span`.
double tick_step(double span, int ticks) {
  const double raw = span / std::max(ticks, 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

QColor step_class_color(const std::string& kernel_class) {
  static const std::map<std::string, QColor> colors = {
      {"q_prep", QColor(0x4e, 0x79, 0xa7)},     {"rope_kv_write", QColor(0x59, 0xa1, 0x4f)},
      {"metadata", QColor(0xed, 0xc9, 0x48)},   {"kv_indices", QColor(0xb0, 0x7a, 0xa1)},
      {"copy", QColor(0xe1, 0x57, 0x59)},       {"mla_stage1", QColor(0xf2, 0x8e, 0x2b)},
      {"mla_reduce", QColor(0x9c, 0x75, 0x5f)}, {"other", QColor(0xba, 0xb0, 0xac)}};
  const auto it = colors.find(kernel_class);
  return it == colors.end() ? QColor(0x80, 0x80, 0x80) : it->second;
}

QColor step_band_color() { return QColor(0xb0, 0x10, 0x60); }

QImage step_picture(const validate::StepWhatIf& w, size_t step, const QString& title, QSize size) {
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  QFont bold = p.font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 1.15);
  p.setFont(bold);
  p.setPen(Qt::black);
  p.drawText(QRect(12, 6, size.width() - 24, 26), Qt::AlignLeft | Qt::AlignVCenter, title);
  p.setFont(QFont());
  if (step >= w.before.size() || step >= w.after.size()) {
    p.drawText(QRect(12, 40, size.width() - 24, 30), Qt::AlignLeft, QStringLiteral("no step to draw"));
    return image;
  }
  const validate::DecodeStep* lanes[2] = {&w.before[step], &w.after[step]};
  const QString names[2] = {QStringLiteral("measured"), QStringLiteral("edited")};
  // The edits' 90 % band around the edited step's end: this step's half width.
  const double band = step < w.band_per_step_us.size() ? w.band_per_step_us[step] : 0.0;
  const double span = std::max({lanes[0]->time_us(), lanes[1]->time_us() + band, 1e-9});
  const QFontMetrics fm(p.font());
  const int left = fm.horizontalAdvance(QStringLiteral("measured 0000.0 us")) + 24;
  const int right = size.width() - 16;
  const int top = 44, lane_h = 70, lane_gap = 26;
  const auto x_of = [&](double us) { return left + (right - left) * us / span; };

  for (int l = 0; l < 2; ++l) {
    const int y = top + l * (lane_h + lane_gap);
    p.setPen(Qt::black);
    p.drawText(QRect(8, y, left - 16, lane_h), Qt::AlignRight | Qt::AlignVCenter,
               QStringLiteral("%1 %2 us").arg(names[l]).arg(lanes[l]->time_us(), 0, 'f', 1));
    double t = 0;
    for (const validate::StepKernel& k : lanes[l]->kernels) {
      t += k.gap_us;
      const double x0 = x_of(t), x1 = x_of(t + k.exposed_us);
      t += k.exposed_us;
      if (x1 - x0 <= 0) continue;
      p.fillRect(QRectF(x0, y, std::max(x1 - x0, 0.5), lane_h), step_class_color(k.kernel_class));
    }
    p.setPen(QColor(0x60, 0x60, 0x60));
    p.drawRect(QRectF(left, y, right - left, lane_h));
    if (l == 1 && band > 0) {  // a whisker with end caps across the lane's middle, and what it is
      const double x0 = x_of(std::max(0.0, lanes[1]->time_us() - band)), x1 = x_of(lanes[1]->time_us() + band);
      const double ym = y + lane_h / 2.0;
      p.setPen(QPen(step_band_color(), 2));
      p.drawLine(QPointF(x0, ym), QPointF(x1, ym));
      p.drawLine(QPointF(x0, ym - 10), QPointF(x0, ym + 10));
      p.drawLine(QPointF(x1, ym - 10), QPointF(x1, ym + 10));
      p.drawText(QRectF(x1 - 240, y - lane_gap + 4, 240, 18), Qt::AlignRight | Qt::AlignVCenter,
                 QStringLiteral("90 % band +- %1 us").arg(band, 0, 'f', 1));
    }
  }

  // The time axis under the lanes.
  const int axis_y = top + 2 * lane_h + lane_gap + 6;
  p.setPen(Qt::black);
  p.drawLine(left, axis_y, right, axis_y);
  const double dt = tick_step(span, 10);
  for (double us = 0; us <= span + 1e-9; us += dt) {
    const double x = x_of(us);
    p.drawLine(QPointF(x, axis_y), QPointF(x, axis_y + 5));
    p.drawText(QRectF(x - 40, axis_y + 6, 80, 18), Qt::AlignHCenter | Qt::AlignTop, QString::number(us));
  }
  p.drawText(QRect(right - 60, axis_y + 22, 60, 18), Qt::AlignRight, QStringLiteral("us"));

  // The legend: every class with its time in the measured and the edited step.
  int x = left, y = axis_y + 44;
  const auto before = lanes[0]->class_us(), after = lanes[1]->class_us();
  for (const std::string& c : validate::step_classes()) {
    const double a = before.count(c) ? before.at(c) : 0.0, b = after.count(c) ? after.at(c) : 0.0;
    if (a <= 0 && b <= 0) continue;
    const QString label =
        QStringLiteral("%1 %2 -> %3").arg(QString::fromStdString(c)).arg(a, 0, 'f', 1).arg(b, 0, 'f', 1);
    const int wdt = 18 + fm.horizontalAdvance(label) + 18;
    if (x + wdt > right) {
      x = left;
      y += 22;
    }
    p.fillRect(QRect(x, y + 3, 12, 12), step_class_color(c));
    p.setPen(Qt::black);
    p.drawText(QRect(x + 18, y, wdt, 18), Qt::AlignLeft | Qt::AlignVCenter, label);
    x += wdt;
  }
  return image;
}

}  // namespace mlasim::gui
