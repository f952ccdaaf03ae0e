#pragma once
// The timeline widget: a scroll area whose paintEvent hands the visible window to TimelinePainter.
// Ctrl+wheel (or +/-) zooms time around the cursor, Shift+wheel or a drag pans, 0 fits; a tooltip names the box
// under the cursor; a click selects the box's request (its fragments and reduce tiles stay lit, the rest fade).
#include <QAbstractScrollArea>
#include <memory>

#include "mlasim/gui/timeline_painter.h"

namespace mlasim::gui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // Shows `scene`. The zoom is kept while the time range still fits the new scene, else the view fits it.
  void set_scene(std::shared_ptr<const TimelineScene> scene);
  const std::shared_ptr<const TimelineScene>& scene() const { return scene_; }

  void set_selected_request(int request);  // -1 clears; does not emit requestSelected
  int selected_request() const { return style_.selected_request; }

  // A fixed row height (1..64 px); until one is set, rows take the tallest height (1..8 px) that shows every row.
  void set_row_height(int pixels);
  void fit_rows();
  const TimelineStyle& style() const { return style_; }
  // The window the painter draws now (the viewport's size, time range and scroll).
  TimelineViewport current_viewport() const;

  // Zooms time by `factor` (> 1: closer) keeping the time under viewport x `anchor_x` in place.
  void zoom(double factor, double anchor_x);
  void zoom_to_fit();

 signals:
  // A click on a box (its request) or on empty space (-1).
  void requestSelected(int request);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool viewportEvent(QEvent* event) override;

 private:
  double full_span() const;
  void set_time_window(double t0, double t1);
  void sync_scrollbars();
  int max_scroll_y() const;
  void apply_row_height(int pixels);

  std::shared_ptr<const TimelineScene> scene_;
  TimelineStyle style_;
  double t0_ = 0, t1_ = 1;
  int scroll_y_ = 0;
  bool syncing_ = false;
  bool auto_rows_ = true;
  QPoint press_pos_;
  double press_t0_ = 0;
  int press_scroll_y_ = 0;
  bool dragging_ = false;
  bool pressed_ = false;
};

}  // namespace mlasim::gui
