#include "mlasim/gui/validation_scatter_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace mlasim::gui {
namespace {

constexpr double kTop = 16;  // the summary line sits above the widget, so no room for a title

}  // namespace

ValidationScatterView::ValidationScatterView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void ValidationScatterView::set_points(std::vector<ValidationPoint> points, std::vector<QString> tooltips) {
  points_ = std::move(points);
  tooltips_ = std::move(tooltips);
  tooltips_.resize(points_.size());
  selected_ = -1;
  pressed_ = -1;
  update();
}

QString ValidationScatterView::tooltip(int point) const {
  return point >= 0 && static_cast<size_t>(point) < tooltips_.size() ? tooltips_[static_cast<size_t>(point)]
                                                                     : QString();
}

ScatterLayout ValidationScatterView::layout() const { return ScatterLayout(points_, size(), kTop); }

int ValidationScatterView::point_at(QPointF pos) const { return layout().hit_test(points_, pos); }

void ValidationScatterView::set_selected(int point) {
  if (point < -1 || point >= static_cast<int>(points_.size())) point = -1;
  if (point == selected_) return;
  selected_ = point;
  update();
}

void ValidationScatterView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  p.setRenderHint(QPainter::Antialiasing);
  paint_validation_scatter(p, points_, layout(), selected_);
}

void ValidationScatterView::mousePressEvent(QMouseEvent* event) {
  pressed_ = event->button() == Qt::LeftButton ? point_at(event->position()) : -1;
  QWidget::mousePressEvent(event);
}

void ValidationScatterView::mouseMoveEvent(QMouseEvent* event) {
  // The hand says a click here opens something.
  setCursor(point_at(event->position()) >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
  QWidget::mouseMoveEvent(event);
}

void ValidationScatterView::mouseReleaseEvent(QMouseEvent* event) {
  // A click is a press and a release on the same point, so a drag off a point picks nothing.
  const int point = event->button() == Qt::LeftButton ? point_at(event->position()) : -1;
  const bool clicked = point >= 0 && point == pressed_;
  pressed_ = -1;
  if (!clicked) return QWidget::mouseReleaseEvent(event);
  set_selected(point);
  emit pointClicked(point);
}

bool ValidationScatterView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int point = point_at(help->pos());
    if (point >= 0)
      QToolTip::showText(help->globalPos(), tooltip(point), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace mlasim::gui
