#include "mlasim/gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QItemSelection>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSaveFile>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "mlasim/gui/export.h"
#include "mlasim/gui/measured_lane.h"
#include "mlasim/gui/measured_metrics_model.h"
#include "mlasim/gui/metrics_model.h"
#include "mlasim/gui/policy_panel.h"
#include "mlasim/gui/step_view.h"
#include "mlasim/gui/sweep_view.h"
#include "mlasim/gui/text_format.h"
#include "mlasim/gui/timeline_view.h"
#include "mlasim/gui/validation_view.h"
#include "mlasim/gui/work_table_model.h"
#include "mlasim/gui/workload_panel.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/plan_json.h"
#include "mlasim/sim/plan_text.h"
#include "mlasim/sim/report.h"

namespace mlasim::gui {
namespace {

const char* side_name(int side) { return side == 0 ? "A" : "B"; }

// The tabs in their order, by the names show_tab takes.
const QStringList& tab_names() {
  static const QStringList names = {QStringLiteral("timeline"), QStringLiteral("plans"), QStringLiteral("sweep"),
                                    QStringLiteral("validation"), QStringLiteral("step")};
  return names;
}

QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("mlasim policy explorer"));
  workload_ = new WorkloadPanel;
  policies_[0] = new PolicyPanel(tr("Policy A"));
  policies_[1] = new PolicyPanel(tr("Policy B"));
  auto* forms = new QWidget;
  auto* forms_layout = new QVBoxLayout(forms);
  forms_layout->addWidget(workload_);
  forms_layout->addWidget(policies_[0]);
  forms_layout->addWidget(policies_[1]);
  forms_layout->addStretch(1);
  auto* forms_scroll = new QScrollArea;
  forms_scroll->setWidget(forms);
  forms_scroll->setWidgetResizable(true);
  forms_scroll->setMinimumWidth(300);
  auto* forms_dock = new QDockWidget(tr("Workload and policies"));
  forms_dock->setObjectName(QStringLiteral("forms"));
  forms_dock->setWidget(forms_scroll);
  forms_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, forms_dock);

  metrics_ = new MetricsModel(this);
  auto* metrics_table = new QTableView;
  metrics_table->setModel(metrics_);
  metrics_table->verticalHeader()->hide();
  metrics_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  metrics_table->horizontalHeader()->setStretchLastSection(true);
  metrics_table->setSelectionMode(QAbstractItemView::NoSelection);
  uplift_label_ = new QLabel;
  uplift_label_->setObjectName(QStringLiteral("uplift"));
  uplift_label_->setWordWrap(true);
  QFont big = uplift_label_->font();
  big.setPointSizeF(big.pointSizeF() * 1.25);
  big.setBold(true);
  uplift_label_->setFont(big);
  measured_metrics_ = new MeasuredMetricsModel(this);
  measured_table_ = new QTableView;
  measured_table_->setModel(measured_metrics_);
  measured_table_->verticalHeader()->hide();
  measured_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  measured_table_->horizontalHeader()->setStretchLastSection(true);
  measured_table_->setSelectionMode(QAbstractItemView::NoSelection);
  measured_table_->hide();
  measured_label_ = new QLabel;
  measured_label_->setObjectName(QStringLiteral("measured"));
  measured_label_->setWordWrap(true);
  measured_label_->hide();
  auto* metrics_box = new QWidget;
  metrics_box->setMinimumWidth(440);
  auto* metrics_layout = new QVBoxLayout(metrics_box);
  metrics_layout->addWidget(uplift_label_);
  metrics_layout->addWidget(metrics_table, 1);
  metrics_layout->addWidget(measured_label_);
  metrics_layout->addWidget(measured_table_, 1);
  auto* metrics_dock = new QDockWidget(tr("Metrics"));
  metrics_dock->setObjectName(QStringLiteral("metrics"));
  metrics_dock->setWidget(metrics_box);
  metrics_dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, metrics_dock);

  timeline_ = new TimelineView;
  works_ = new WorkTableModel(this);
  works_proxy_ = new QSortFilterProxyModel(this);
  works_proxy_->setSourceModel(works_);
  works_proxy_->setSortRole(Qt::UserRole);
  work_table_ = new QTableView;
  work_table_->setModel(works_proxy_);
  work_table_->setSortingEnabled(true);
  work_table_->sortByColumn(-1, Qt::AscendingOrder);
  work_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  work_table_->verticalHeader()->setDefaultSectionSize(work_table_->fontMetrics().height() + 4);
  work_table_->verticalHeader()->hide();
  work_lane_ = new QComboBox;
  work_lane_->addItems({tr("works of A"), tr("works of B")});
  auto* works_box = new QWidget;
  auto* works_layout = new QVBoxLayout(works_box);
  works_layout->setContentsMargins(0, 0, 0, 0);
  works_layout->addWidget(work_lane_);
  works_layout->addWidget(work_table_, 1);
  auto* timeline_split = new QSplitter(Qt::Vertical);
  timeline_split->addWidget(timeline_);
  timeline_split->addWidget(works_box);
  timeline_split->setStretchFactor(0, 4);
  timeline_split->setStretchFactor(1, 1);

  plan_text_ = new QPlainTextEdit;
  plan_text_->setReadOnly(true);
  plan_text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  plan_text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  sweep_ = new SweepView;
  validation_ = new ValidationView;
  step_ = new StepView;
  tabs_ = new QTabWidget;
  tabs_->addTab(timeline_split, tr("Timeline"));
  tabs_->addTab(plan_text_, tr("Plans"));
  tabs_->addTab(sweep_, tr("Sweep"));
  tabs_->addTab(validation_, tr("Validation"));
  tabs_->addTab(step_, tr("Step"));

  error_label_ = new QLabel;
  error_label_->setObjectName(QStringLiteral("error"));
  error_label_->setWordWrap(true);
  error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_label_->setStyleSheet(
      QStringLiteral("background: #fde7e7; color: #8a1111; padding: 6px; border: 1px solid #e3a3a3;"));
  error_label_->hide();
  auto* central = new QWidget;
  auto* central_layout = new QVBoxLayout(central);
  central_layout->setContentsMargins(4, 4, 4, 4);
  central_layout->addWidget(error_label_);
  central_layout->addWidget(tabs_, 1);
  setCentralWidget(central);
  build_menus();

  connect(workload_, &WorkloadPanel::workloadChanged, this, [this] { recompute(); });
  for (int s = 0; s < 2; ++s)
    connect(policies_[static_cast<size_t>(s)], &PolicyPanel::specChanged, this, [this, s] {
      // Editing a side's policy replaces a plan imported for that side.
      imported_[static_cast<size_t>(s)].reset();
      policies_[static_cast<size_t>(s)]->set_note({});
      recompute();
    });
  connect(timeline_, &TimelineView::requestSelected, this, &MainWindow::select_request);
  connect(work_lane_, &QComboBox::currentIndexChanged, this, [this](int side) {
    works_->set_lane(scene_, lane_of_side(side));
    select_request(timeline_->selected_request());
  });
  connect(work_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (syncing_selection_ || !current.isValid()) return;
            timeline_->set_selected_request(works_->request_of_row(works_proxy_->mapToSource(current).row()));
          });
  connect(validation_, &ValidationView::openRequested, this, &MainWindow::open_measurements_with_dialog);
  connect(validation_, &ValidationView::rowChosen, this, &MainWindow::show_measured_row);
  connect(step_, &StepView::openRequested, this, &MainWindow::open_step_trace_with_dialog);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == plan_text_) show_results();
  });

  resize(1500, 950);
  set_scenario(sim::Scenario{});
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open scenario..."), QKeySequence::Open, this, &MainWindow::open_with_dialog);
  QMenu* examples = file->addMenu(tr("Examples"));
  const QDir dir(qstr(data_dir()) + QStringLiteral("/scenarios"));
  for (const QFileInfo& info : dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
    examples->addAction(info.completeBaseName(), this, [this, path = info.filePath()] {
      if (!open_scenario(path)) warn(tr("Cannot open the scenario"));
    });
  examples->setEnabled(!examples->isEmpty());
  file->addAction(tr("&Save scenario"), QKeySequence::Save, this, [this] {
    if (scenario_path_.isEmpty()) return save_with_dialog();
    if (!save_scenario(scenario_path_)) warn(tr("Cannot save the scenario"));
  });
  file->addAction(tr("Save scenario &as..."), QKeySequence::SaveAs, this, &MainWindow::save_with_dialog);
  file->addSeparator();
  file->addAction(tr("Import plan into &A..."), this, [this] { import_with_dialog(0); });
  file->addAction(tr("Import plan into &B..."), this, [this] { import_with_dialog(1); });
  file->addSeparator();
  file->addAction(tr("&Export timeline (PNG, SVG, CSV)..."), this, &MainWindow::export_with_dialog);
  file->addAction(tr("Export &metrics CSV..."), this, &MainWindow::export_metrics_with_dialog);
  file->addSeparator();
  file->addAction(tr("Open mea&surements..."), this, &MainWindow::open_measurements_with_dialog);
  file->addAction(tr("Open measured &timeline..."), this, &MainWindow::open_measured_timeline_with_dialog);
  close_measured_action_ = file->addAction(tr("C&lose measured timeline"), this, &MainWindow::close_measured_timeline);
  close_measured_action_->setEnabled(false);
  file->addAction(tr("Open step t&race..."), this, &MainWindow::open_step_trace_with_dialog);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, this,
                  [this] { timeline_->zoom(1.5, timeline_->viewport()->width() / 2.0); });
  view->addAction(tr("Zoom &out"), QKeySequence::ZoomOut, this,
                  [this] { timeline_->zoom(1 / 1.5, timeline_->viewport()->width() / 2.0); });
  view->addAction(tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), timeline_, &TimelineView::zoom_to_fit);
  view->addAction(tr("&Taller rows"), QKeySequence(Qt::CTRL | Qt::Key_Up), this,
                  [this] { timeline_->set_row_height(timeline_->style().row_height + 1); });
  view->addAction(tr("&Shorter rows"), QKeySequence(Qt::CTRL | Qt::Key_Down), this,
                  [this] { timeline_->set_row_height(timeline_->style().row_height - 1); });
  view->addAction(tr("Rows to fit the &height"), QKeySequence(Qt::CTRL | Qt::Key_9), timeline_,
                  &TimelineView::fit_rows);
  view->addAction(tr("&Clear selection"), this, [this] { select_request(-1); });
}

const sim::Evaluation* MainWindow::side(int s) const {
  const auto& r = results_[static_cast<size_t>(s)];
  return r ? &*r : nullptr;
}

sim::Scenario MainWindow::scenario() const {
  sim::Scenario s = loaded_;
  s.workload = workload_->workload();
  s.policies = {{"A", policies_[0]->spec()}, {"B", policies_[1]->spec()}};
  return s;
}

void MainWindow::set_scenario(const sim::Scenario& file) {
  // The explorer compares two sides: A and B by name, else the file's first two policies (one policy: both sides).
  sim::Scenario s = file;
  s.policies = {{"A", file.spec("A", 0)}, {"B", file.spec("B", 1)}};
  // Everything is checked before any form changes, so a scenario that does not plan leaves the window as it was.
  const auto ctx = std::make_shared<const sim::WorkloadContext>(sim::resolve(s.workload));
  for (int side = 0; side < 2; ++side) {
    try {
      sim::evaluate(s.policies[static_cast<size_t>(side)].spec, *ctx);
    } catch (const InputError& e) {
      throw InputError("policies." + std::string(side_name(side)), e.what());
    }
  }
  workload_->set_workload(s.workload);
  for (int side = 0; side < 2; ++side) {
    policies_[static_cast<size_t>(side)]->set_spec(s.policies[static_cast<size_t>(side)].spec);
    policies_[static_cast<size_t>(side)]->set_note({});
    imported_[static_cast<size_t>(side)].reset();
  }
  loaded_ = s;
  timeline_->set_selected_request(-1);
  recompute();
}

bool MainWindow::recompute() {
  QElapsedTimer timer;
  timer.start();
  std::shared_ptr<const sim::WorkloadContext> ctx;
  sim::Scenario current = loaded_;
  try {
    current.workload = workload_->workload();
    ctx = std::make_shared<const sim::WorkloadContext>(sim::resolve(current.workload));
  } catch (const std::exception& e) {
    show_error(tr("Workload: %1").arg(qstr(e.what())));
    return false;
  }
  std::array<std::optional<sim::Evaluation>, 2> next;
  QStringList notes;
  if (measured_) {
    // A is the measured timeline's checked plan while the forms still make that plan; else the lane goes.
    if (!imported_[0] && current.workload == measured_->workload && policies_[0]->spec() == measured_->policy) {
      next[0] = measured_->data.check->evaluation;
    } else {
      notes << tr("Closed the measured timeline %1: the workload or policy A no longer make its plan.")
                   .arg(QFileInfo(qstr(measured_->data.path)).fileName());
      measured_.reset();
      close_measured_action_->setEnabled(false);
    }
  }
  for (int s = 0; s < 2; ++s) {
    const size_t i = static_cast<size_t>(s);
    current.policies[i].spec = policies_[i]->spec();
    if (next[i]) continue;
    if (imported_[i]) {
      try {
        next[i] = sim::evaluate_plan(*imported_[i], imported_origin_[i].toStdString(), *ctx);
      } catch (const InputError& e) {
        notes << tr("The plan imported into %1 no longer fits (%2); %1 is planned by its policy again.")
                     .arg(side_name(s), qstr(e.what()));
        imported_[i].reset();
        policies_[i]->set_note({});
      }
    }
    if (next[i]) continue;
    try {
      next[i] = sim::evaluate(current.policies[i].spec, *ctx);
    } catch (const std::exception& e) {
      show_error(tr("Policy %1: %2").arg(side_name(s), qstr(e.what())));
      return false;
    }
  }
  results_ = std::move(next);
  context_ = std::move(ctx);
  step_->set_workload(context_, current.policies[0].spec);
  sweep_->set_scenario(current);
  show_results();
  clear_error();
  last_update_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  statusBar()->showMessage(notes.isEmpty()
                               ? tr("Re-planned, simulated and drawn in %1 ms").arg(last_update_ms_, 0, 'f', 1)
                               : notes.join(QStringLiteral(" ")));
  return true;
}

void MainWindow::show_results() {
  std::vector<TimelineLane> lanes;
  if (measured_) lanes.push_back(measured_->lane);
  for (int s = 0; s < 2; ++s)
    if (side(s)) lanes.push_back(make_lane(side_name(s), *side(s)));
  scene_ = std::make_shared<const TimelineScene>(make_scene(std::move(lanes)));
  if (timeline_->selected_request() >= scene_->num_requests) timeline_->set_selected_request(-1);
  timeline_->set_scene(scene_);
  metrics_->set_results(side(0), side(1));
  measured_metrics_->set_comparison(measured_ ? &measured_->data.check->comparison : nullptr);
  measured_table_->setVisible(measured_.has_value());
  measured_label_->setVisible(measured_.has_value());
  if (measured_) {
    const validate::MeasuredTimeline& m = *measured_->data.timeline;
    QString line = tr("Measured timeline %1: %2%3, %4 works, measured against A (the same plan)")
                       .arg(QFileInfo(qstr(measured_->data.path)).fileName(), qstr(m.kernel),
                            m.device.empty() ? QString() : tr(" on %1").arg(qstr(m.device)))
                       .arg(measured_->data.check->comparison.works.size());
    if (m.overhead_pct() != 0)
      line += tr("; the stamps add %1 % to the kernel time").arg(QString::number(m.overhead_pct(), 'f', 1));
    measured_label_->setText(line);
  }
  uplift_label_->setText(side(0) && side(1)
                             ? uplift_text(sim::speedup(side(0)->prediction->metrics, side(1)->prediction->metrics))
                             : QString());
  works_->set_lane(scene_, lane_of_side(work_lane_->currentIndex()));
  if (timeline_->selected_request() >= 0) select_request(timeline_->selected_request());
  // The plan text of a large batch is long; it is written only while its tab is shown.
  if (tabs_->currentWidget() == plan_text_ && context_) {
    std::string text = sim::describe_workload(context_->batch, context_->gpu, context_->clusters) + "\n";
    for (int s = 0; s < 2; ++s) {
      const sim::Evaluation* r = side(s);
      if (!r) continue;
      text += "\n== " + std::string(side_name(s)) + ": " + r->source + " ==\n" +
              sim::format_plan_text(*r->plan, context_->batch.page_size) + "\n" +
              sim::metrics_text(r->prediction->metrics);
    }
    plan_text_->setPlainText(qstr(text));
  }
}

bool MainWindow::show_tab(const QString& name) {
  const int index = static_cast<int>(tab_names().indexOf(name));
  if (index < 0) return false;
  tabs_->setCurrentIndex(index);
  return true;
}

QString MainWindow::current_tab() const { return tab_names().value(tabs_->currentIndex()); }

void MainWindow::select_request(int request) {
  timeline_->set_selected_request(request);
  syncing_selection_ = true;
  QItemSelection selection;
  for (int row : works_->rows_of_request(request))
    selection.select(works_->index(row, 0), works_->index(row, WorkTableModel::kColumns - 1));
  const QItemSelection shown = works_proxy_->mapSelectionFromSource(selection);
  work_table_->selectionModel()->select(shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  if (!shown.isEmpty()) work_table_->scrollTo(shown.indexes().front());
  syncing_selection_ = false;
}

void MainWindow::show_error(const QString& message) {
  last_error_ = message;
  error_label_->setText(message);
  error_label_->show();
  statusBar()->showMessage(message);
}

void MainWindow::clear_error() {
  error_label_->clear();
  error_label_->hide();
}

bool MainWindow::open_scenario(const QString& path) {
  try {
    const sim::Scenario s = sim::load_scenario(path.toStdString());  // its errors name the file
    try {
      set_scenario(s);
    } catch (const InputError& e) {
      throw InputError("scenario", path.toStdString() + ": " + e.what());
    }
  } catch (const InputError& e) {
    show_error(tr("Cannot open the scenario: %1").arg(qstr(e.what())));
    return false;
  }
  scenario_path_ = path;
  setWindowTitle(tr("%1 - mlasim policy explorer").arg(QFileInfo(path).fileName()));
  return true;
}

bool MainWindow::save_scenario(const QString& path) {
  try {
    sim::save_scenario(scenario(), path.toStdString());
  } catch (const InputError& e) {
    show_error(tr("Cannot save the scenario: %1").arg(qstr(e.what())));
    return false;
  }
  scenario_path_ = path;
  setWindowTitle(tr("%1 - mlasim policy explorer").arg(QFileInfo(path).fileName()));
  statusBar()->showMessage(tr("Saved %1").arg(path));
  return true;
}

bool MainWindow::import_plan(int s, const QString& path) {
  const size_t i = static_cast<size_t>(s);
  const std::string file = path.toStdString();
  try {
    if (!context_) throw InputError("workload", "fix the workload before importing a plan");
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly))
      throw InputError("plan", file + ": cannot read (" + in.errorString().toStdString() + ")");
    const QByteArray bytes = in.readAll();
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(bytes.constData(), bytes.constData() + bytes.size());
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError("plan", file + ": not valid JSON (" + e.what() + ")");
    }
    if (j.is_object() && j.contains("gpu") && j["gpu"].is_string() && j["gpu"].get<std::string>() != context_->gpu.name)
      throw InputError("plan", file + ": was made for " + j["gpu"].get<std::string>() + " but the workload runs on " +
                                   context_->gpu.name);
    sim::Plan plan;
    try {
      plan = sim::plan_from_json(j);
    } catch (const InputError& e) {
      throw InputError("plan", file + ": " + e.what());
    }
    const std::string origin = QFileInfo(path).fileName().toStdString();
    sim::Evaluation result = sim::evaluate_plan(plan, origin, *context_);
    if (s == 0 && measured_) {
      // The measured lane belongs to A's checked plan, which the imported one replaces.
      statusBar()->showMessage(tr("Closed the measured timeline %1: A shows an imported plan.")
                                   .arg(QFileInfo(qstr(measured_->data.path)).fileName()));
      measured_.reset();
      close_measured_action_->setEnabled(false);
    }
    imported_[i] = std::move(plan);
    imported_origin_[i] = qstr(origin);
    results_[i] = std::move(result);
  } catch (const std::exception& e) {
    show_error(tr("Cannot import the plan into %1: %2").arg(side_name(s), qstr(e.what())));
    return false;
  }
  policies_[i]->set_note(
      tr("Showing the plan imported from %1; change the policy or a knob to plan again.").arg(imported_origin_[i]));
  show_results();
  clear_error();
  return true;
}

bool MainWindow::export_to(const QString& path) {
  try {
    if (!scene_) throw InputError("out", "there is no timeline to export yet");
    ExportOptions options;
    options.width = std::max(options.width, timeline_->viewport()->width());
    options.row_height = timeline_->style().row_height;
    export_scene(*scene_, path.toStdString(), options);
  } catch (const InputError& e) {
    show_error(tr("Cannot export: %1").arg(qstr(e.what())));
    return false;
  }
  statusBar()->showMessage(tr("Wrote %1").arg(path));
  return true;
}

bool MainWindow::export_metrics_csv(const QString& path) {
  try {
    if (!path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive))
      throw InputError("out", path.toStdString() + ": must end in .csv");
    if (!context_) throw InputError("out", "nothing to export: the workload does not plan");
    const std::string text = metrics_csv(*context_, side(0), side(1));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
        !file.commit())
      throw InputError("out", path.toStdString() + ": cannot write (" + file.errorString().toStdString() + ")");
  } catch (const InputError& e) {
    show_error(tr("Cannot export: %1").arg(qstr(e.what())));
    return false;
  }
  statusBar()->showMessage(tr("Wrote %1").arg(path));
  return true;
}

bool MainWindow::open_measurements(const QString& path) {
  ValidationSource source;
  source.fallback_gpu = workload_->gpu_box()->currentText().toStdString();
  try {
    // Only a rocprof trace needs it; a workload that does not parse leaves the trace without one.
    source.trace_workload = validate::measurement_row_of(workload_->workload(), policies_[0]->spec());
  } catch (const InputError&) {
  }
  if (!validation_->open(path, source)) {
    last_error_ = validation_->error();
    statusBar()->showMessage(last_error_);
    return false;
  }
  statusBar()->showMessage(tr("Predicted %1 rows of %2 on %3")
                               .arg(validation_->data()->run.rows.size())
                               .arg(path, qstr(validation_->data()->gpu)));
  return true;
}

bool MainWindow::show_measured_row(int index) {
  const ValidationSet* set = validation_->data();
  if (!set || index < 0 || static_cast<size_t>(index) >= set->run.rows.size()) return false;
  const validate::PreparedRow& row = set->run.rows[static_cast<size_t>(index)];
  const std::string file = QFileInfo(qstr(set->path)).fileName().toStdString();
  const auto fit_it = std::find_if(set->run.result.rows.begin(), set->run.result.rows.end(),
                                   [index](const RowFit& f) { return f.row == static_cast<size_t>(index); });
  if (fit_it == set->run.result.rows.end()) return false;
  const RowFit& fit = *fit_it;
  sim::Scenario s;
  s.name = file + " line " + std::to_string(row.row.line);
  s.description = "measured " + row.target + " " + QString::number(fit.measured_us, 'f', 3).toStdString() +
                  ", predicted " + QString::number(fit.predicted_us, 'f', 3).toStdString() + " on " + set->gpu;
  s.workload = row_workload(row, set->gpu);
  s.policies = {{"A", row.row.policy}, {"B", policies_[1]->spec()}};
  try {
    try {
      set_scenario(s);
    } catch (const InputError& e) {
      if (e.field() != "policies.B") throw;
      s.policies[1].spec = row.row.policy;  // B's policy cannot plan this workload: B shows the row's as well
      set_scenario(s);
    }
  } catch (const InputError& e) {
    show_error(tr("Cannot show %1 line %2: %3").arg(qstr(file)).arg(row.row.line).arg(qstr(e.what())));
    return false;
  }
  scenario_path_.clear();  // Save asks where: the shown workload is no longer the file's
  setWindowTitle(tr("%1 - mlasim policy explorer").arg(qstr(s.name)));
  show_tab(QStringLiteral("timeline"));
  statusBar()->showMessage(tr("%1: %2 (A); measured %3, predicted %4 (%5%6 %)")
                               .arg(qstr(s.name), qstr(row.row.policy), format_us(fit.measured_us),
                                    format_us(fit.predicted_us), QString(fit.error_pct >= 0 ? "+" : ""),
                                    QString::number(fit.error_pct, 'f', 1)));
  return true;
}

bool MainWindow::open_measured_timeline(const QString& path) {
  std::optional<OpenTimeline> previous = std::move(measured_);
  measured_.reset();
  try {
    MeasuredCheck checked = check_timeline_file(path.toStdString());  // its errors name the file and field
    const validate::MeasuredTimeline& m = *checked.timeline;
    const std::string file = QFileInfo(path).fileName().toStdString();
    sim::Scenario s;
    s.name = file;
    s.description = "measured " + m.kernel + (m.device.empty() ? "" : " on " + m.device);
    s.workload = m.workload;
    s.policies = {{"A", m.policy}, {"B", policies_[1]->spec()}};
    try {
      try {
        set_scenario(s);
      } catch (const InputError& e) {
        if (e.field() != "policies.B") throw;
        s.policies[1].spec = m.policy;  // B's policy cannot plan this workload: B shows the timeline's as well
        set_scenario(s);
      }
    } catch (const InputError& e) {
      throw InputError("timeline", path.toStdString() + ": " + e.what());
    }
    // The forms as they now stand make the checked plan: A shows it until an edit changes them.
    measured_ = OpenTimeline{checked, make_measured_lane(checked), workload_->workload(), policies_[0]->spec()};
  } catch (const InputError& e) {
    measured_ = std::move(previous);
    show_error(tr("Cannot open the measured timeline: %1").arg(qstr(e.what())));
    return false;
  }
  close_measured_action_->setEnabled(true);
  recompute();
  timeline_->zoom_to_fit();  // the measured runs may end past the predicted ones
  scenario_path_.clear();    // Save asks where: the shown workload came from the timeline
  setWindowTitle(tr("%1 - mlasim policy explorer").arg(QFileInfo(path).fileName()));
  show_tab(QStringLiteral("timeline"));
  const validate::TimelineComparison& c = measured_->data.check->comparison;
  statusBar()->showMessage(tr("Measured timeline %1: %2 works, duration MAPE %3 %, stage 1 measured %4, "
                              "predicted %5")
                               .arg(QFileInfo(path).fileName())
                               .arg(c.works.size())
                               .arg(QString::number(c.duration.mape_pct, 'f', 1), format_us(c.measured.stage1_us),
                                    format_us(c.predicted.stage1_us)));
  return true;
}

void MainWindow::close_measured_timeline() {
  if (!measured_) return;
  measured_.reset();
  close_measured_action_->setEnabled(false);
  recompute();
}

void MainWindow::warn(const QString& title) { QMessageBox::warning(this, title, last_error_); }

void MainWindow::open_with_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), qstr(data_dir()) + "/scenarios",
                                                    tr("Scenarios (*.json)"));
  if (!path.isEmpty() && !open_scenario(path)) warn(tr("Cannot open the scenario"));
}

void MainWindow::save_with_dialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save scenario"), scenario_path_, tr("Scenarios (*.json)"));
  if (!path.isEmpty() && !save_scenario(path)) warn(tr("Cannot save the scenario"));
}

void MainWindow::import_with_dialog(int s) {
  const QString path = QFileDialog::getOpenFileName(this, tr("Import plan into %1").arg(side_name(s)), QString(),
                                                    tr("Plan JSON (*.json)"));
  if (!path.isEmpty() && !import_plan(s, path)) warn(tr("Cannot import the plan"));
}

void MainWindow::export_with_dialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export timeline"), QStringLiteral("timeline.png"),
                                                    tr("PNG (*.png);;SVG (*.svg);;CSV (*.csv)"));
  if (!path.isEmpty() && !export_to(path)) warn(tr("Cannot export"));
}

void MainWindow::open_measurements_with_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open measurements"), qstr(data_dir()) + "/measurements",
                                                    tr("Measurements (*.csv *.log *.txt);;All files (*)"));
  if (!path.isEmpty()) {
    show_tab(QStringLiteral("validation"));
    open_measurements(path);  // a failure is the error line in the tab
  }
}

void MainWindow::open_measured_timeline_with_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open measured timeline"), QString(),
                                                    tr("Measured timelines (*.json *.json.gz);;All files (*)"));
  if (!path.isEmpty() && !open_measured_timeline(path)) warn(tr("Cannot open the measured timeline"));
}

bool MainWindow::open_step_trace(const QString& path) {
  if (!step_->open_trace(path)) {
    last_error_ = step_->last_error();
    show_tab(QStringLiteral("step"));
    return false;
  }
  show_tab(QStringLiteral("step"));
  return true;
}

void MainWindow::open_step_trace_with_dialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open step trace"), QString(), tr("Kernel traces (*.json *.json.gz *.csv *.csv.gz);;All files (*)"));
  if (!path.isEmpty() && !open_step_trace(path)) warn(tr("Cannot open the step trace"));
}

void MainWindow::export_metrics_with_dialog() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export metrics"), QStringLiteral("metrics.csv"), tr("CSV (*.csv)"));
  if (!path.isEmpty() && !export_metrics_csv(path)) warn(tr("Cannot export"));
}

}  // namespace mlasim::gui
