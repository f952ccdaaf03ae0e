#pragma once
// The interactive scatter of the Validation tab: paint_validation_scatter into the widget, a tooltip per point and
// a click that picks a point (the one ScatterLayout::hit_test finds under the cursor).
#include <QString>
#include <QWidget>
#include <vector>

#include "mlasim/gui/validation_scatter.h"

namespace mlasim::gui {

class ValidationScatterView : public QWidget {
  Q_OBJECT

 public:
  explicit ValidationScatterView(QWidget* parent = nullptr);

  // The points and one tooltip each (same order); clears the selection.
  void set_points(std::vector<ValidationPoint> points, std::vector<QString> tooltips);
  const std::vector<ValidationPoint>& points() const { return points_; }
  QString tooltip(int point) const;

  // The layout at the widget's current size: where each point is drawn.
  ScatterLayout layout() const;
  // The point under `pos` (widget coordinates), else -1.
  int point_at(QPointF pos) const;

  void set_selected(int point);  // -1 clears; does not emit pointClicked
  int selected() const { return selected_; }

  QSize sizeHint() const override { return {900, 650}; }
  QSize minimumSizeHint() const override { return {480, 320}; }

 signals:
  // A click on a point (its index in points()); a click beside every point emits nothing.
  void pointClicked(int point);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  std::vector<ValidationPoint> points_;
  std::vector<QString> tooltips_;
  int selected_ = -1;
  int pressed_ = -1;
};

}  // namespace mlasim::gui
