#pragma once
// The policy explorer: workload and policy forms on the left, the A/B timeline with the works table, the plan
// text, the sweep view and the validation scatter in the middle, the metrics on the right. Every edit re-plans and
// re-simulates both sides at once; an edit that fails keeps the last good picture and says why above it. A measured
// timeline, when one is open, is drawn above A (the same plan) and its facts join the metrics.
#include <QMainWindow>
#include <array>
#include <memory>
#include <optional>

#include "mlasim/gui/measured_check.h"
#include "mlasim/gui/timeline_scene.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/scenario.h"

class QAction;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

namespace mlasim::gui {

class MeasuredMetricsModel;
class MetricsModel;
class PolicyPanel;
class StepView;
class SweepView;
class TimelineView;
class ValidationView;
class WorkTableModel;
class WorkloadPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // File operations. On failure they return false, leave everything as it was and last_error() says why.
  bool open_scenario(const QString& path);
  bool save_scenario(const QString& path);
  bool import_plan(int side, const QString& path);  // side 0 = A, 1 = B
  bool export_to(const QString& path);              // the timeline as .png, .svg or .csv
  bool export_metrics_csv(const QString& path);
  // Shows a measurement file in the Validation tab (predicted with the GPU chosen there; logs and traces are
  // attributed to the workload's GPU, a trace to the workload and policy A). False and one error line in the tab
  // when it cannot be read, parsed or planned; the explorer's views are left alone.
  bool open_measurements(const QString& path);
  // Shows row `row` of the Validation tab's file (an index into its run.rows) in the forms, plan and timeline:
  // the workload panel gets the row's workload and policy A the row's policy, so both sides are planned and
  // simulated by sim::evaluate as any edit is. B keeps its policy when that plans the workload, else takes the
  // row's. Switches to the Timeline tab. False (and the message shown) when the row cannot be shown.
  bool show_measured_row(int row);
  // Opens a measured timeline (validate::measured_timeline_from_json): the workload panel gets its workload and
  // policy A its policy, A is the plan checked against it (validate::check_measured_timeline, simulated as the
  // kernel that ran) and the timeline shows the measured lane above A. B keeps its policy when that plans the
  // workload, else takes the timeline's. The measured lane stays while the workload and policy A still make its
  // plan; an edit that changes them closes it. False (and the message shown) when the file cannot be read,
  // parsed or planned; nothing changes then.
  bool open_measured_timeline(const QString& path);
  void close_measured_timeline();
  // The measured timeline shown, or nullptr.
  const MeasuredCheck* measured_timeline() const { return measured_ ? &measured_->data : nullptr; }

  // The scenario the forms describe (throws InputError when a form does not parse).
  sim::Scenario scenario() const;
  // Shows `s` after checking that it plans; throws InputError and changes nothing otherwise.
  void set_scenario(const sim::Scenario& s);
  // Plans and simulates both sides from the forms now; false (and the message shown) when that fails.
  bool recompute();

  // Opens a kernel trace of decode steps in the Step tab (its batch: the workload; the policy that ran: A) and shows
  // the tab; false (and the message shown) when it cannot be read.
  bool open_step_trace(const QString& path);

  // Shows the tab "timeline", "plans", "sweep", "validation" or "step"; false for another name.
  bool show_tab(const QString& name);
  QString current_tab() const;
  // Selects `request` as a click on one of its boxes would (-1 clears).
  void select_request(int request);

  const QString& last_error() const { return last_error_; }
  const sim::Evaluation* side(int s) const;
  std::shared_ptr<const TimelineScene> scene() const { return scene_; }
  double last_update_ms() const { return last_update_ms_; }

  WorkloadPanel* workload_panel() const { return workload_; }
  PolicyPanel* policy_panel(int side) const { return policies_[static_cast<size_t>(side)]; }
  TimelineView* timeline_view() const { return timeline_; }
  MetricsModel* metrics_model() const { return metrics_; }
  MeasuredMetricsModel* measured_metrics_model() const { return measured_metrics_; }
  QLabel* measured_label() const { return measured_label_; }
  WorkTableModel* work_model() const { return works_; }
  QTableView* work_table() const { return work_table_; }
  SweepView* sweep_view() const { return sweep_; }
  ValidationView* validation_view() const { return validation_; }
  StepView* step_view() const { return step_; }
  QLabel* error_label() const { return error_label_; }
  QLabel* uplift_label() const { return uplift_label_; }

 private:
  void build_menus();
  void show_error(const QString& message);
  void clear_error();
  void show_results();
  void open_with_dialog();
  void save_with_dialog();
  void import_with_dialog(int side);
  void export_with_dialog();
  void export_metrics_with_dialog();
  void open_measurements_with_dialog();
  void open_measured_timeline_with_dialog();
  void open_step_trace_with_dialog();
  void warn(const QString& title);
  // The scene lane of side 0 (A) or 1 (B): after the measured lane when one is shown.
  int lane_of_side(int side) const { return side + (measured_ ? 1 : 0); }

  // A measured timeline shown above A, with the forms that make its plan (while they do, A is its check).
  struct OpenTimeline {
    MeasuredCheck data;
    TimelineLane lane;
    sim::Workload workload;
    std::string policy;
  };

  WorkloadPanel* workload_;
  std::array<PolicyPanel*, 2> policies_{};
  TimelineView* timeline_;
  MetricsModel* metrics_;
  MeasuredMetricsModel* measured_metrics_;
  QTableView* measured_table_;
  QLabel* measured_label_;
  QAction* close_measured_action_ = nullptr;
  WorkTableModel* works_;
  QSortFilterProxyModel* works_proxy_;
  QTableView* work_table_;
  QComboBox* work_lane_;
  QPlainTextEdit* plan_text_;
  SweepView* sweep_;
  ValidationView* validation_;
  StepView* step_;
  QTabWidget* tabs_;
  QLabel* error_label_;
  QLabel* uplift_label_;

  std::optional<OpenTimeline> measured_;
  std::array<std::optional<sim::Evaluation>, 2> results_;
  std::array<std::optional<sim::Plan>, 2> imported_;
  std::array<QString, 2> imported_origin_;
  std::shared_ptr<const sim::WorkloadContext> context_;
  std::shared_ptr<const TimelineScene> scene_;
  sim::Scenario loaded_;  // name and description of the open scenario
  QString scenario_path_;
  QString last_error_;
  double last_update_ms_ = 0;
  bool syncing_selection_ = false;
};

}  // namespace mlasim::gui
