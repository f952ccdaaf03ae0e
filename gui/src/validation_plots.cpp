#include "mlasim/gui/validation_plots.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <map>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/validate/error_report.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::gui {
namespace {

// Colours per kernel class, fixed so the same class has the same colour in every picture.
QColor class_color(const std::string& name) {
  static const std::map<std::string, QColor> colors = {
      {"wgmma-bf16", QColor(31, 119, 180)},     {"wgmma-bf16-pair", QColor(214, 39, 40)},
      {"wgmma-fp8", QColor(44, 160, 44)},       {"portable-fp8", QColor(255, 127, 14)},
      {"portable-bf16", QColor(148, 103, 189)}, {"unknown", QColor(127, 127, 127)}};
  const auto it = colors.find(name);
  return it == colors.end() ? QColor(127, 127, 127) : it->second;
}

// A log-scale axis mapping [lo, hi] onto pixels [p0, p1].
struct LogAxis {
  double lo, hi;
  double p0, p1;
  double at(double v) const {
    return p0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (p1 - p0);
  }
};

void draw_title(QPainter& p, const QString& title, int width) {
  QFont f = p.font();
  f.setPixelSize(18);
  f.setBold(true);
  p.setFont(f);
  p.drawText(QRect(0, 8, width, 26), Qt::AlignHCenter, title);
  f.setPixelSize(13);
  f.setBold(false);
  p.setFont(f);
}

// Blue (0 %) to red (>= 100 %) through yellow, for mean absolute errors.
QColor error_color(double mape) {
  const float t = static_cast<float>(std::clamp(mape / 100.0, 0.0, 1.0));
  if (t < 0.5f) return QColor::fromRgbF(0.2f + 1.28f * t, 0.45f + 0.9f * t, 0.85f - 1.4f * t);
  return QColor::fromRgbF(1.0f, 0.9f - 1.5f * (t - 0.5f), 0.15f);
}

}  // namespace

std::vector<ValidationPoint> validation_points(const validate::CalibrationRun& run) {
  std::vector<ValidationPoint> out;
  for (const RowFit& f : run.result.rows) {
    const validate::PreparedRow& p = run.rows[f.row];
    if (p.target != "kernel_us" || f.measured_us <= 0 || f.predicted_us <= 0) continue;
    const std::vector<int> lens = p.row.lengths();
    double mean = 0;
    for (int l : lens) mean += l;
    mean /= static_cast<double>(std::max<size_t>(lens.size(), 1));
    out.push_back({f.measured_us, f.predicted_us, validate::kernel_class(p.row), p.row.batch, mean});
  }
  return out;
}

QImage validation_scatter(const std::vector<ValidationPoint>& points, const QString& title, QSize size) {
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  draw_title(p, title, size.width());
  double lo = 1e30, hi = 0;
  for (const ValidationPoint& v : points) {
    lo = std::min({lo, v.measured_us, v.predicted_us});
    hi = std::max({hi, v.measured_us, v.predicted_us});
  }
  if (points.empty()) lo = 1, hi = 10;
  lo = std::pow(10.0, std::floor(std::log10(lo)));
  hi = std::pow(10.0, std::ceil(std::log10(hi)));
  const QRectF area(80, 50, size.width() - 320, size.height() - 120);
  const LogAxis x{lo, hi, area.left(), area.right()}, y{lo, hi, area.bottom(), area.top()};
  // Bands first, so the points draw over them: +-20 % light, +-10 % darker, y = x.
  for (const auto& [band, shade] : {std::pair{0.2, 235}, std::pair{0.1, 215}}) {
    QPolygonF poly;
    poly << QPointF(x.at(lo), y.at(lo * (1 - band))) << QPointF(x.at(hi / (1 + band)), y.at(hi))
         << QPointF(x.at(hi), y.at(hi)) << QPointF(x.at(hi), y.at(hi * (1 - band))) << QPointF(x.at(lo), y.at(lo));
    QPolygonF upper;
    upper << QPointF(x.at(lo), y.at(lo)) << QPointF(x.at(lo), y.at(lo * (1 + band)))
          << QPointF(x.at(hi / (1 + band)), y.at(hi)) << QPointF(x.at(hi), y.at(hi));
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(shade, shade, shade));
    p.drawPolygon(poly);
    p.drawPolygon(upper);
  }
  p.setPen(QPen(Qt::black, 1));
  p.drawLine(QPointF(x.at(lo), y.at(lo)), QPointF(x.at(hi), y.at(hi)));
  // Decades on both axes.
  p.setBrush(Qt::NoBrush);
  p.drawRect(area);
  for (double d = lo; d <= hi * 1.001; d *= 10) {
    p.setPen(QPen(QColor(200, 200, 200), 1, Qt::DotLine));
    p.drawLine(QPointF(x.at(d), area.top()), QPointF(x.at(d), area.bottom()));
    p.drawLine(QPointF(area.left(), y.at(d)), QPointF(area.right(), y.at(d)));
    p.setPen(Qt::black);
    const QString label = QString::number(d, 'g', 6);
    p.drawText(QRectF(x.at(d) - 40, area.bottom() + 4, 80, 18), Qt::AlignHCenter, label);
    p.drawText(QRectF(area.left() - 76, y.at(d) - 9, 70, 18), Qt::AlignRight | Qt::AlignVCenter, label);
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
    QColor c = class_color(v.kernel_class);
    c.setAlpha(170);
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawEllipse(QPointF(x.at(v.measured_us), y.at(v.predicted_us)), 3.2, 3.2);
  }
  // Legend: classes with their row counts, and the bands.
  double ly = area.top() + 6;
  for (const auto& [name, n] : counts) {
    p.setBrush(class_color(name));
    p.drawEllipse(QPointF(area.right() + 24, ly + 8), 5, 5);
    p.setPen(Qt::black);
    p.drawText(QPointF(area.right() + 36, ly + 13), QString::fromStdString(name) + QStringLiteral(" (%1)").arg(n));
    p.setPen(Qt::NoPen);
    ly += 22;
  }
  p.setPen(Qt::black);
  p.drawText(QPointF(area.right() + 18, ly + 20), QStringLiteral("bands: +-10 %, +-20 %"));
  return image;
}

QImage validation_heatmap(const std::vector<ValidationPoint>& points, const QString& title, QSize size) {
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  draw_title(p, title, size.width());
  // Power-of-two bands: batch 1, 2-3, 4-7, ... ; context 64-127, 128-255, ...
  const auto band = [](double v) { return static_cast<int>(std::floor(std::log2(std::max(v, 1.0)))); };
  std::map<std::pair<int, int>, std::vector<double>> cells;
  int bmin = 99, bmax = 0, cmin = 99, cmax = 0;
  for (const ValidationPoint& v : points) {
    const int b = band(v.batch), c = band(v.mean_context);
    cells[{b, c}].push_back(v.error_pct());
    bmin = std::min(bmin, b), bmax = std::max(bmax, b), cmin = std::min(cmin, c), cmax = std::max(cmax, c);
  }
  if (cells.empty()) return image;
  const QRectF area(110, 50, size.width() - 280, size.height() - 120);
  const double cw = area.width() / (cmax - cmin + 1), ch = area.height() / (bmax - bmin + 1);
  for (const auto& [key, errors] : cells) {
    double mape = 0, signed_mean = 0;
    for (double e : errors) mape += std::abs(e), signed_mean += e;
    mape /= static_cast<double>(errors.size());
    signed_mean /= static_cast<double>(errors.size());
    const QRectF cell(area.left() + (key.second - cmin) * cw, area.bottom() - (key.first - bmin + 1) * ch, cw, ch);
    p.setPen(QPen(Qt::white, 1));
    p.setBrush(error_color(mape));
    p.drawRect(cell);
    p.setPen(Qt::black);
    p.drawText(
        cell, Qt::AlignCenter,
        QStringLiteral("%1%2 %\n(%3)").arg(signed_mean >= 0 ? "+" : "").arg(signed_mean, 0, 'f', 0).arg(errors.size()));
  }
  p.setPen(Qt::black);
  for (int c = cmin; c <= cmax; ++c)
    p.drawText(QRectF(area.left() + (c - cmin) * cw, area.bottom() + 4, cw, 18), Qt::AlignHCenter,
               QString::number(1 << c));
  for (int b = bmin; b <= bmax; ++b)
    p.drawText(QRectF(area.left() - 60, area.bottom() - (b - bmin + 1) * ch, 54, ch), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(1 << b));
  p.drawText(QRectF(area.left(), area.bottom() + 26, area.width(), 20), Qt::AlignHCenter,
             "context (tokens per request, from)");
  p.save();
  p.translate(22, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-area.height() / 2, -10, area.height(), 20), Qt::AlignHCenter, "batch (requests, from)");
  p.restore();
  // Colour key.
  for (int i = 0; i <= 10; ++i) {
    const QRectF key(area.right() + 30, area.top() + i * 24, 24, 22);
    p.setPen(Qt::NoPen);
    p.setBrush(error_color(i * 10.0));
    p.drawRect(key);
    p.setPen(Qt::black);
    p.drawText(QPointF(key.right() + 6, key.center().y() + 5),
               QStringLiteral("%1%2 %").arg(i * 10).arg(i == 10 ? "+" : ""));
  }
  p.drawText(QPointF(area.right() + 20, area.top() + 11 * 24 + 16), QStringLiteral("mean |error|"));
  p.drawText(QPointF(area.right() + 20, area.top() + 11 * 24 + 34), QStringLiteral("cell: signed mean"));
  p.drawText(QPointF(area.right() + 20, area.top() + 11 * 24 + 52), QStringLiteral("(rows)"));
  return image;
}

void write_validation_plots(const std::vector<std::string>& measurement_files, const std::string& gpu_name,
                            const std::string& dir) {
  const Gpu gpu = load_gpu(gpu_name);
  std::vector<validate::MeasurementRow> rows;
  for (const std::string& file : measurement_files)
    for (validate::MeasurementRow& r : validate::read_measurement_csv(file))
      if (r.gpu == gpu.name) rows.push_back(std::move(r));
  const validate::CalibrationRun run = validate::evaluate_profile(gpu, rows);
  const std::vector<ValidationPoint> points = validation_points(run);
  std::vector<double> errors;
  for (const ValidationPoint& v : points) errors.push_back(v.error_pct());
  const validate::ErrorStats s = validate::error_stats(errors);
  const QString summary = QStringLiteral("%1: %2 rows, MAPE %3 %, p90 %4 %")
                              .arg(QString::fromStdString(gpu.name))
                              .arg(s.rows)
                              .arg(s.mape_pct, 0, 'f', 1)
                              .arg(s.p90_pct, 0, 'f', 1);
  const std::string base = dir + "/" + gpu.name;
  if (!validation_scatter(points, QStringLiteral("predicted against measured - ") + summary)
           .save(QString::fromStdString(base + "_scatter.png")))
    throw InputError("out-dir", base + "_scatter.png: cannot write");
  if (!validation_heatmap(points, QStringLiteral("error over batch x context - ") + summary)
           .save(QString::fromStdString(base + "_heatmap.png")))
    throw InputError("out-dir", base + "_heatmap.png: cannot write");
}

}  // namespace mlasim::gui
