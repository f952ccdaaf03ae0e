#pragma once
// The sweep view: predicted kernel time of A and B along context or batch (a QtCharts line chart), and B's speedup
// over batch x context as a heatmap with the crossover (B = A) drawn on the cell edges. Sweeps run off the UI
// thread in a sim::BackgroundSweep that a UI timer polls (no Qt object crosses threads); a run started while one is
// going waits and then runs once.
#include <QString>
#include <QWidget>
#include <string>

#include "mlasim/gui/sweep_analysis.h"
#include "mlasim/sim/background_sweep.h"
#include "mlasim/sim/scenario.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace mlasim::gui {

class SweepView : public QWidget {
  Q_OBJECT

 public:
  explicit SweepView(QWidget* parent = nullptr);
  ~SweepView() override;

  // The workload and policies the next run sweeps (batches become uniform: requests x context).
  void set_scenario(const sim::Scenario& s);

  void run();
  bool running() const;

  const SweepLine& line() const { return line_; }
  const SpeedupGrid& grid() const { return grid_; }
  // Why the last run failed; empty after a success.
  const QString& error() const { return error_; }
  QChart* line_chart() const;
  QChart* heatmap_chart() const;
  QComboBox* axis_box() const { return axis_; }

 signals:
  void finished();

 private:
  void start();
  void poll();
  void show_outcome(const sim::BackgroundSweep::Outcome& outcome);
  void show_error(const std::string& error);
  void draw_line();
  void draw_heatmap();
  void paint_heatmap_background();

  sim::Scenario scenario_;
  SweepLine line_;
  SpeedupGrid grid_;
  QString error_;
  bool rerun_ = false;

  QComboBox* axis_;
  QSpinBox* from_;
  QSpinBox* to_;
  QSpinBox* points_;
  QSpinBox* max_batch_;
  QSpinBox* min_context_;
  QSpinBox* max_context_;
  QPushButton* run_button_;
  QProgressBar* progress_;
  QLabel* status_;
  QChartView* line_view_;
  QChartView* heat_view_;
  QTimer* poll_;
  sim::BackgroundSweep sweep_;  // destroyed first: cancels and joins its worker before the widgets go
};

}  // namespace mlasim::gui
