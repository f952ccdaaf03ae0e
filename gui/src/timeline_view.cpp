#include "mlasim/gui/timeline_view.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "mlasim/gui/text_format.h"

namespace mlasim::gui {
namespace {

constexpr int kScrollSteps = 100000;  // horizontal scrollbar resolution over the whole time range
constexpr double kMinSpanUs = 0.05;

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  style_.font = font();
  style_.font.setPixelSize(11);
  style_.row_height = 3;
  style_.reduce_row_height = 3;
  viewport()->setMouseTracking(true);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::StrongFocus);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
}

double TimelineView::full_span() const { return scene_ && scene_->end_us > 0 ? scene_->end_us * 1.02 : 1.0; }

void TimelineView::set_scene(std::shared_ptr<const TimelineScene> scene) {
  const bool first = !scene_;
  scene_ = std::move(scene);
  if (auto_rows_) fit_rows();
  if (first || t1_ > full_span() || t1_ - t0_ <= kMinSpanUs)
    zoom_to_fit();
  else
    sync_scrollbars();
  viewport()->update();
}

void TimelineView::set_selected_request(int request) {
  if (style_.selected_request == request) return;
  style_.selected_request = request;
  viewport()->update();
}

void TimelineView::set_row_height(int pixels) {
  auto_rows_ = false;
  apply_row_height(pixels);
}

void TimelineView::apply_row_height(int pixels) {
  style_.row_height = std::clamp(pixels, 1, 64);
  style_.reduce_row_height = std::max(2, style_.row_height);
  sync_scrollbars();
  viewport()->update();
}

void TimelineView::fit_rows() {
  auto_rows_ = true;
  if (!scene_) return;
  int pixels = 8;
  for (; pixels > 1; --pixels) {
    TimelineStyle trial = style_;
    trial.row_height = pixels;
    trial.reduce_row_height = std::max(2, pixels);
    if (TimelineLayout(*scene_, trial, current_viewport()).full_height() <= viewport()->height()) break;
  }
  apply_row_height(pixels);
}

TimelineViewport TimelineView::current_viewport() const {
  return TimelineViewport{viewport()->size(), t0_, t1_, scroll_y_};
}

int TimelineView::max_scroll_y() const {
  if (!scene_) return 0;
  const TimelineLayout layout(*scene_, style_, current_viewport());
  return std::max(0, layout.content_height() - (viewport()->height() - style_.axis_height));
}

void TimelineView::set_time_window(double t0, double t1) {
  const double full = full_span();
  double span = std::clamp(t1 - t0, std::min(kMinSpanUs, full), full);
  t0 = std::clamp(t0, 0.0, full - span);
  t0_ = t0;
  t1_ = t0 + span;
  sync_scrollbars();
  viewport()->update();
}

void TimelineView::zoom(double factor, double anchor_x) {
  if (!scene_) return;
  const TimelineLayout layout(*scene_, style_, current_viewport());
  const double anchor_t = layout.t_of(anchor_x);
  const double span = (t1_ - t0_) / factor;
  const double frac = (anchor_t - t0_) / std::max(1e-12, t1_ - t0_);
  set_time_window(anchor_t - frac * span, anchor_t - frac * span + span);
}

void TimelineView::zoom_to_fit() { set_time_window(0, full_span()); }

void TimelineView::sync_scrollbars() {
  syncing_ = true;
  const double full = full_span();
  const double span = t1_ - t0_;
  const int page = std::max(1, static_cast<int>(std::lround(span / full * kScrollSteps)));
  horizontalScrollBar()->setRange(0, std::max(0, kScrollSteps - page));
  horizontalScrollBar()->setPageStep(page);
  horizontalScrollBar()->setSingleStep(std::max(1, page / 10));
  horizontalScrollBar()->setValue(static_cast<int>(std::lround(t0_ / full * kScrollSteps)));
  scroll_y_ = std::clamp(scroll_y_, 0, max_scroll_y());
  verticalScrollBar()->setRange(0, max_scroll_y());
  verticalScrollBar()->setPageStep(std::max(1, viewport()->height() - style_.axis_height));
  verticalScrollBar()->setSingleStep(std::max(1, style_.row_height * 8));
  verticalScrollBar()->setValue(scroll_y_);
  syncing_ = false;
}

void TimelineView::scrollContentsBy(int, int) {
  if (syncing_) return;
  const double span = t1_ - t0_;
  t0_ = std::clamp(horizontalScrollBar()->value() / double(kScrollSteps) * full_span(), 0.0,
                   std::max(0.0, full_span() - span));
  t1_ = t0_ + span;
  scroll_y_ = verticalScrollBar()->value();
  viewport()->update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(viewport());
  if (!scene_) {
    painter.fillRect(viewport()->rect(), style_.background);
    return;
  }
  TimelinePainter::paint(painter, *scene_, current_viewport(), style_);
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  if (auto_rows_) fit_rows();
  sync_scrollbars();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  if (!scene_) return;
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ControlModifier) {
    zoom(std::pow(1.25, steps), event->position().x());
    event->accept();
  } else if (event->modifiers() & Qt::ShiftModifier) {
    const double span = t1_ - t0_;
    set_time_window(t0_ - steps * span / 10, t1_ - steps * span / 10);
    event->accept();
  } else {
    QAbstractScrollArea::wheelEvent(event);
  }
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QAbstractScrollArea::mousePressEvent(event);
  pressed_ = true;
  dragging_ = false;
  press_pos_ = event->position().toPoint();
  press_t0_ = t0_;
  press_scroll_y_ = scroll_y_;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!pressed_ || !scene_) return QAbstractScrollArea::mouseMoveEvent(event);
  const QPoint delta = event->position().toPoint() - press_pos_;
  if (!dragging_ && delta.manhattanLength() < 4) return;
  dragging_ = true;
  setCursor(Qt::ClosedHandCursor);
  const TimelineLayout layout(*scene_, style_, current_viewport());
  const double us_per_px = (t1_ - t0_) / std::max(1.0, layout.plot_rect().width());
  const double span = t1_ - t0_;
  scroll_y_ = std::clamp(press_scroll_y_ - delta.y(), 0, max_scroll_y());
  set_time_window(press_t0_ - delta.x() * us_per_px, press_t0_ - delta.x() * us_per_px + span);
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !pressed_) return QAbstractScrollArea::mouseReleaseEvent(event);
  pressed_ = false;
  unsetCursor();
  if (dragging_ || !scene_) return;
  const TimelineLayout layout(*scene_, style_, current_viewport());
  int request = -1;
  if (const auto hit = layout.hit_test(event->position())) {
    const auto& tl = scene_->lanes[static_cast<size_t>(hit->lane)].timeline();
    request = hit->reduce ? tl.reduce[static_cast<size_t>(hit->index)].request
                          : tl.rows[static_cast<size_t>(hit->row)][static_cast<size_t>(hit->index)].request;
  }
  set_selected_request(request);
  emit requestSelected(request);
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  if (!scene_) return QAbstractScrollArea::keyPressEvent(event);
  const double center = viewport()->width() / 2.0 + style_.header_width / 2.0;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoom(1.5, center); break;
    case Qt::Key_Minus: zoom(1 / 1.5, center); break;
    case Qt::Key_0: zoom_to_fit(); break;
    case Qt::Key_Escape:
      set_selected_request(-1);
      emit requestSelected(-1);
      break;
    default: QAbstractScrollArea::keyPressEvent(event);
  }
}

bool TimelineView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip && scene_) {
    auto* help = static_cast<QHelpEvent*>(event);
    const TimelineLayout layout(*scene_, style_, current_viewport());
    if (const auto hit = layout.hit_test(help->pos()))
      QToolTip::showText(help->globalPos(), box_tooltip(*scene_, *hit), viewport());
    else
      QToolTip::hideText();
    return true;
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace mlasim::gui
