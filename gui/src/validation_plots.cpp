#include "mlasim/gui/validation_plots.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <map>

#include "mlasim/gui/export.h"
#include "mlasim/gui/validation_scatter.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::gui {
namespace {

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

// A white image of `size` with `title` at the top, and `draw` run with an antialiased painter on it.
template <typename Draw>
QImage titled_canvas(QSize size, const QString& title, const Draw& draw) {
  QImage image(size, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  draw_title(p, title, size.width());
  draw(p);
  return image;
}

// The error heatmap over batch x context bands, with its axes and colour key.
void paint_heatmap(QPainter& p, const std::vector<ValidationPoint>& points, QSize size) {
  // Power-of-two bands: batch 1, 2-3, 4-7, ... ; context 64-127, 128-255, ...
  const auto band = [](double v) { return static_cast<int>(std::floor(std::log2(std::max(v, 1.0)))); };
  std::map<std::pair<int, int>, std::vector<double>> cells;
  int bmin = 99, bmax = 0, cmin = 99, cmax = 0;
  for (const ValidationPoint& v : points) {
    const int b = band(v.batch), c = band(v.mean_context);
    cells[{b, c}].push_back(v.error_pct());
    bmin = std::min(bmin, b), bmax = std::max(bmax, b), cmin = std::min(cmin, c), cmax = std::max(cmax, c);
  }
  if (cells.empty()) return;
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
    out.push_back({f.measured_us, f.predicted_us, validate::kernel_class(p), p.row.batch, mean, f.row});
  }
  return out;
}

QString validation_summary(const std::string& gpu, const validate::ErrorStats& stats) {
  return QStringLiteral("%1: %2 rows, MAPE %3 %, p90 %4 %")
      .arg(QString::fromStdString(gpu))
      .arg(stats.rows)
      .arg(stats.mape_pct, 0, 'f', 1)
      .arg(stats.p90_pct, 0, 'f', 1);
}

QImage validation_scatter(const std::vector<ValidationPoint>& points, const QString& title, QSize size) {
  return titled_canvas(size, title,
                       [&](QPainter& p) { paint_validation_scatter(p, points, ScatterLayout(points, size)); });
}

QImage validation_heatmap(const std::vector<ValidationPoint>& points, const QString& title, QSize size) {
  return titled_canvas(size, title, [&](QPainter& p) { paint_heatmap(p, points, size); });
}

void write_validation_plots(const std::vector<std::string>& measurement_files, const std::string& gpu_name,
                            const std::string& dir) {
  const Gpu gpu = load_gpu(gpu_name);
  const std::string base = dir + "/" + gpu.name;
  check_writable(base + "_scatter.png", "out-dir");  // before reading and predicting every row
  std::vector<validate::MeasurementRow> rows;
  for (const std::string& file : measurement_files)
    for (validate::MeasurementRow& r : validate::read_measurement_csv(file))
      if (r.gpu == gpu.name) rows.push_back(std::move(r));
  const validate::CalibrationRun run = validate::evaluate_profile(gpu, rows);
  const std::vector<ValidationPoint> points = validation_points(run);
  std::vector<double> errors;
  for (const ValidationPoint& v : points) errors.push_back(v.error_pct());
  const validate::ErrorStats s = validate::error_stats(errors);
  const QString summary = validation_summary(gpu.name, s);
  write_png(base + "_scatter.png",
            validation_scatter(points, QStringLiteral("predicted against measured - ") + summary), "out-dir");
  write_png(base + "_heatmap.png",
            validation_heatmap(points, QStringLiteral("error over batch x context - ") + summary), "out-dir");
}

}  // namespace mlasim::gui
