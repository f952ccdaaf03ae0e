// The explorer window on the offscreen platform: forms in, metrics and pictures out, and bad files refused
// without losing anything.
#include <QAbstractItemModelTester>
#include <QChart>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTest>
#include <algorithm>

#include "gui_test_support.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/gui/metrics_model.h"
#include "mlasim/gui/policy_panel.h"
#include "mlasim/gui/sweep_view.h"
#include "mlasim/gui/text_format.h"
#include "mlasim/gui/timeline_view.h"
#include "mlasim/gui/work_table_model.h"
#include "mlasim/gui/workload_panel.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/plan_json.h"
#include "mlasim/sim/split_policy.h"

using namespace mlasim;
using namespace mlasim::gui;

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> window_;

  double shown(const char* metric, int column) const {
    MetricsModel* m = window_->metrics_model();
    return m->data(m->index(m->row_of(metric), column), Qt::UserRole).toDouble();
  }
  QString shown_text(const char* metric, int column) const {
    MetricsModel* m = window_->metrics_model();
    return m->data(m->index(m->row_of(metric), column)).toString();
  }
  // The metrics the window should show for `s`, computed without the window.
  static testing::Sides expected(const sim::Scenario& s) { return testing::evaluate(s); }

  static QString write_file(const QString& name, const QByteArray& bytes) {
    const QString path = testing::output_path(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
  }

 private slots:
  void init() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }
  void cleanup() { window_.reset(); }

  void it_opens_on_the_readme_scenario() {
    QVERIFY(testing::same_json(scenario_to_json(window_->scenario()), scenario_to_json(sim::Scenario{})));
    const auto want = expected(sim::Scenario{});
    QCOMPARE(shown("kernel_us", MetricsModel::kA), want.a.prediction->metrics.kernel_us);
    QCOMPARE(shown("kernel_us", MetricsModel::kB), want.b.prediction->metrics.kernel_us);
    QCOMPARE(shown("active_clusters", MetricsModel::kA), 64.0);
    QCOMPARE(shown("active_clusters", MetricsModel::kB), 256.0);
    QVERIFY(window_->error_label()->isHidden());
  }

  void the_metrics_show_the_shared_formatter_text() {
    const auto want = expected(sim::Scenario{});
    QCOMPARE(shown_text("kernel_us", MetricsModel::kA), QString::number(want.a.prediction->metrics.kernel_us, 'f', 2));
    QStringList splits;  // four requests: metrics_text lists every count
    for (int n : want.a.prediction->metrics.splits_per_request) splits << QString::number(n);
    QCOMPARE(shown_text("splits_per_request", MetricsModel::kA), splits.join(' '));
    const double speedup = want.a.prediction->metrics.kernel_us / want.b.prediction->metrics.kernel_us;
    QCOMPARE(shown_text("kernel_us", MetricsModel::kBvsA), QString::number(speedup, 'f', 2) + "x");
    QCOMPARE(window_->uplift_label()->text(), uplift_text(speedup));
  }

  void a_knob_edit_replans_its_side() {
    window_->policy_panel(0)->set_knob_text("max_split_per_batch", QStringLiteral("8"));
    sim::Scenario s;
    s.policies[0].spec = "aiter-v1:max_split_per_batch=8";
    const auto want = expected(s);
    QCOMPARE(window_->policy_panel(0)->spec(), s.policies[0].spec);
    QCOMPARE(shown("kernel_us", MetricsModel::kA), want.a.prediction->metrics.kernel_us);
    QCOMPARE(shown("active_clusters", MetricsModel::kA), 32.0);
    QCOMPARE(shown("kernel_us", MetricsModel::kB), want.b.prediction->metrics.kernel_us);
    QCOMPARE(window_->uplift_label()->text(),
             uplift_text(sim::speedup(want.a.prediction->metrics, want.b.prediction->metrics)));
  }

  void workload_edits_replan_both_sides_data() {
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("heads");
    QTest::newRow("8 x 100000") << 8 << 100000 << 16;
    QTest::newRow("4 x 3000") << 4 << 3000 << 16;
    QTest::newRow("64 x 8192, 128 heads") << 64 << 8192 << 128;
  }
  void workload_edits_replan_both_sides() {
    QFETCH(int, count);
    QFETCH(int, context);
    QFETCH(int, heads);
    WorkloadPanel* w = window_->workload_panel();
    w->count_box()->setValue(count);
    w->context_box()->setValue(context);
    w->heads_box()->setValue(heads);
    sim::Scenario s;
    s.workload.batch.count = count;
    s.workload.batch.context = context;
    s.workload.heads = heads;
    const auto want = expected(s);
    for (const char* metric : {"kernel_us", "stage1_us", "reduce_us", "num_works", "num_partials", "occupancy"}) {
      QCOMPARE(shown(metric, MetricsModel::kA), sim::metrics_to_json(want.a.prediction->metrics)[metric].get<double>());
      QCOMPARE(shown(metric, MetricsModel::kB), sim::metrics_to_json(want.b.prediction->metrics)[metric].get<double>());
    }
    QCOMPARE(window_->scene()->num_requests, count);
  }

  // A top-k makes the workload sparse: both sides plan the gathered rows, and dense again restores the picture.
  void a_topk_plans_the_sparse_batch() {
    WorkloadPanel* w = window_->workload_panel();
    const double dense_kernel = shown("kernel_us", MetricsModel::kA);
    w->topk_box()->setValue(2048);
    QVERIFY2(window_->error_label()->isHidden(), qPrintable(window_->error_label()->text()));
    sim::Scenario s;
    s.workload.topk = 2048;
    const auto want = expected(s);
    QCOMPARE(shown("kernel_us", MetricsModel::kA), want.a.prediction->metrics.kernel_us);
    QCOMPARE(shown("kernel_us", MetricsModel::kB), want.b.prediction->metrics.kernel_us);
    QCOMPARE(shown("kv_bytes", MetricsModel::kA), 4.0 * 2048 * 576);
    QCOMPARE(window_->scenario().workload.topk, 2048);
    w->topk_box()->setValue(0);
    QCOMPARE(shown("kernel_us", MetricsModel::kA), dense_kernel);
  }

  // DeepSeek-V4's scopes: a layer kind fills its preset and both sides plan it; a merged run adds the scope merge to
  // the reduce lane; off restores the dense picture; a scenario's scopes show as they are.
  void dsv4_scopes_plan_both_sides() {
    WorkloadPanel* w = window_->workload_panel();
    const double dense_kernel = shown("kernel_us", MetricsModel::kA);
    w->dsv4_box()->setCurrentText(QStringLiteral("csa"));
    QVERIFY2(window_->error_label()->isHidden(), qPrintable(window_->error_label()->text()));
    sim::Scenario s;
    s.workload.scopes = TwoScopes::preset("csa");
    QCOMPARE(window_->scenario().workload.scopes, s.workload.scopes);
    auto want = expected(s);
    QCOMPARE(shown("kernel_us", MetricsModel::kA), want.a.prediction->metrics.kernel_us);
    QCOMPARE(shown("kv_bytes", MetricsModel::kA), 4.0 * (128 + 1024) * 576);
    w->scope_run_box()->setCurrentText(QStringLiteral("merged"));
    s.workload.scopes.run = TwoScopes::Run::merged;
    want = expected(s);
    QCOMPARE(shown("kernel_us", MetricsModel::kB), want.b.prediction->metrics.kernel_us);
    QVERIFY(std::any_of(want.a.prediction->timeline.reduce.begin(), want.a.prediction->timeline.reduce.end(),
                        [](const sim::ReduceBox& r) { return r.scope_merge; }));
    w->dsv4_box()->setCurrentText(QStringLiteral("off"));
    QCOMPARE(shown("kernel_us", MetricsModel::kA), dense_kernel);
    QVERIFY(!window_->scenario().workload.scopes.on());
    sim::Workload custom;
    custom.scopes = {256, 8, 0, TwoScopes::Run::merged};
    w->set_workload(custom);
    QCOMPARE(w->workload().scopes, custom.scopes);
  }

  // Every registered policy gets a form with an editor per knob, and choosing it either plans or says why not.
  void every_policy_builds_its_form() {
    PolicyPanel* panel = window_->policy_panel(1);
    for (size_t i = 0; i < sim::policy_registry().size(); ++i) {
      const sim::PolicyInfo& info = sim::policy_registry()[i];
      panel->policy_box()->setCurrentIndex(-1);  // so choosing the current policy again rebuilds its form
      panel->policy_box()->setCurrentIndex(static_cast<int>(i));
      for (const auto& knob : info.knobs)
        QVERIFY2(panel->knob_editor(knob.name), (info.name + "." + knob.name).c_str());
      QVERIFY2(panel->spec() == info.name, (panel->spec() + " instead of " + info.name).c_str());
      QVERIFY2(window_->error_label()->isHidden() || window_->error_label()->text().startsWith("Policy B:"),
               qPrintable(window_->error_label()->text()));
      if (window_->error_label()->isHidden()) {
        QCOMPARE(window_->side(1)->source, info.name);
      }
    }
  }

  void a_bad_knob_value_keeps_the_last_picture() {
    const auto scene = window_->scene();
    const double kernel = shown("kernel_us", MetricsModel::kA);
    window_->policy_panel(0)->set_knob_text("max_split_per_batch", QStringLiteral("0"));
    QVERIFY(!window_->error_label()->isHidden());
    QVERIFY2(window_->error_label()->text().contains("max_split_per_batch"),
             qPrintable(window_->error_label()->text()));
    QCOMPARE(window_->scene(), scene);
    QCOMPARE(shown("kernel_us", MetricsModel::kA), kernel);
    window_->policy_panel(0)->set_knob_text("max_split_per_batch", QStringLiteral("16"));
    QVERIFY(window_->error_label()->isHidden());
  }

  void a_bad_length_list_keeps_the_last_picture() {
    const auto scene = window_->scene();
    WorkloadPanel* w = window_->workload_panel();
    w->batch_kind_box()->setCurrentIndex(1);
    w->kv_lens_edit()->setText(QStringLiteral("100000, lots"));
    QVERIFY2(window_->error_label()->text().contains("kv_lens"), qPrintable(window_->error_label()->text()));
    w->kv_lens_edit()->setText(QStringLiteral("100000, 2000, 500"));
    QVERIFY(window_->error_label()->isHidden());
    QCOMPARE(window_->scene()->num_requests, 3);
    QVERIFY(window_->scene() != scene);
  }

  void a_scenario_round_trips_through_a_file() {
    window_->workload_panel()->batch_kind_box()->setCurrentIndex(2);
    window_->workload_panel()->heads_box()->setValue(32);
    window_->policy_panel(1)->policy_box()->setCurrentText(QStringLiteral("aiter-v1-adaptive"));
    window_->policy_panel(1)->set_knob_text("rule", QStringLiteral("width"));
    const sim::Scenario before = window_->scenario();
    QCOMPARE(before.policies[1].spec, std::string("aiter-v1-adaptive:rule=width"));
    const QString path = testing::output_path(QStringLiteral("window_round_trip.json"));
    QVERIFY2(window_->save_scenario(path), qPrintable(window_->last_error()));
    MainWindow other;
    QVERIFY2(other.open_scenario(path), qPrintable(other.last_error()));
    QVERIFY(testing::same_json(scenario_to_json(other.scenario()), scenario_to_json(before)));
    QCOMPARE(
        other.metrics_model()->data(
            other.metrics_model()->index(other.metrics_model()->row_of("kernel_us"), MetricsModel::kB), Qt::UserRole),
        window_->metrics_model()->data(
            window_->metrics_model()->index(window_->metrics_model()->row_of("kernel_us"), MetricsModel::kB),
            Qt::UserRole));
  }

  void a_bad_scenario_file_changes_nothing_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON") << QByteArray("{\"workload\": [") << "not valid JSON";
    QTest::newRow("a plan, not a scenario")
        << QByteArray(R"({"derived": {}, "outputs": {}})") << "derived: is not a scenario field";
    QTest::newRow("heads unsupported")
        << QByteArray(R"({"workload": {"heads": 12}, "policies": {"A": "aiter-v1", "B": "aiter-v1"}})") << "heads";
    QTest::newRow("unknown policy") << QByteArray(R"({"workload": {}, "policies": {"A": "aiter-v9", "B": "aiter-v1"}})")
                                    << "policies.A";
    QTest::newRow("bad knob")
        << QByteArray(R"({"workload": {}, "policies": {"A": "aiter-v1", "B": "aiter-v1:max_split_per_batch=0"}})")
        << "max_split_per_batch";
    QTest::newRow("unknown GPU")
        << QByteArray(R"({"workload": {"gpu": "mi999"}, "policies": {"A": "aiter-v1", "B": "aiter-v1"}})") << "gpu";
  }
  void a_bad_scenario_file_changes_nothing() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    window_->workload_panel()->count_box()->setValue(6);
    const nlohmann::json before = scenario_to_json(window_->scenario());
    const auto scene = window_->scene();
    const QString path =
        write_file(QStringLiteral("bad_scenario_%1.json").arg(QTest::currentDataTag()).replace(' ', '_'), text);
    QVERIFY(!window_->open_scenario(path));
    QVERIFY2(window_->last_error().contains(expected), qPrintable(window_->last_error()));
    QVERIFY2(window_->last_error().contains(path), qPrintable(window_->last_error()));
    QVERIFY(!window_->error_label()->isHidden());
    QVERIFY(testing::same_json(scenario_to_json(window_->scenario()), before));
    QCOMPARE(window_->scene(), scene);
  }

  void a_missing_scenario_file_changes_nothing() {
    const auto scene = window_->scene();
    QVERIFY(!window_->open_scenario(QStringLiteral("/nonexistent/x.json")));
    QVERIFY(window_->last_error().contains(QStringLiteral("cannot read")));
    QCOMPARE(window_->scene(), scene);
  }

  void an_imported_plan_replaces_one_side() {
    sim::Scenario s;
    s.policies[1].spec = "aiter-v1:max_split_per_batch=4";
    const auto want = expected(s);
    nlohmann::json j = sim::plan_to_json(*want.b.plan);
    j["gpu"] = "mi355x";
    const QString path = write_file(QStringLiteral("plan_msb4.json"), QByteArray::fromStdString(j.dump()));
    QVERIFY2(window_->import_plan(1, path), qPrintable(window_->last_error()));
    QCOMPARE(window_->side(1)->source, std::string("imported: plan_msb4.json"));
    QCOMPARE(shown("kernel_us", MetricsModel::kB), want.b.prediction->metrics.kernel_us);
    QCOMPARE(shown("active_clusters", MetricsModel::kB), 16.0);
    // Editing B's policy plans B again.
    window_->policy_panel(1)->set_knob_text("max_split_per_batch", QStringLiteral("2"));
    QCOMPARE(window_->side(1)->source, std::string("aiter-v1:max_split_per_batch=2"));
  }

  // A plan dumped from AITER: the buffers as top-level lists, no derived values and no policy.
  void an_aiter_dump_imports() {
    sim::Scenario s;
    s.policies[0].spec = "aiter-v1:max_split_per_batch=2";
    const auto want = expected(s);
    const nlohmann::json dump = sim::plan_to_json(*want.a.plan)["outputs"];
    const QString path = write_file(QStringLiteral("aiter_dump.json"), QByteArray::fromStdString(dump.dump()));
    QVERIFY2(window_->import_plan(0, path), qPrintable(window_->last_error()));
    QCOMPARE(shown("active_clusters", MetricsModel::kA), 8.0);
    QCOMPARE(shown("num_works", MetricsModel::kA), static_cast<double>(want.a.plan->num_works()));
    QCOMPARE(shown("kernel_us", MetricsModel::kA), want.a.prediction->metrics.kernel_us);
  }

  void a_bad_plan_file_changes_nothing_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    sim::Scenario eight;
    eight.workload.batch.count = 8;
    nlohmann::json other_batch = sim::plan_to_json(*expected(eight).a.plan);
    nlohmann::json other_gpu = sim::plan_to_json(*expected(sim::Scenario{}).a.plan);
    other_gpu["gpu"] = "mi300x";
    QTest::newRow("not JSON") << QByteArray("[[[") << "not valid JSON";
    QTest::newRow("no work_indptr") << QByteArray(R"({"outputs": {"work_info_set": []}})") << "work_indptr: is missing";
    QTest::newRow("another batch") << QByteArray::fromStdString(other_batch.dump()) << "does not fit the workload";
    QTest::newRow("another GPU") << QByteArray::fromStdString(other_gpu.dump()) << "was made for mi300x";
  }
  void a_bad_plan_file_changes_nothing() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const auto scene = window_->scene();
    const std::string source = window_->side(0)->source;
    const QString path =
        write_file(QStringLiteral("bad_plan_%1.json").arg(QTest::currentDataTag()).replace(' ', '_'), text);
    QVERIFY(!window_->import_plan(0, path));
    QVERIFY2(window_->last_error().contains(expected), qPrintable(window_->last_error()));
    QCOMPARE(window_->scene(), scene);
    QCOMPARE(window_->side(0)->source, source);
  }

  // A click on a box selects its request: the timeline lights its fragments and the table selects its works.
  void a_click_selects_a_request() {
    TimelineView* view = window_->timeline_view();
    QSignalSpy spy(view, &TimelineView::requestSelected);
    const TimelineLayout layout(*view->scene(), view->style(), view->current_viewport());
    const auto& box = view->scene()->lanes[0].timeline().rows[40].front();  // CU 40 of A: request 2
    const QPoint at(static_cast<int>(layout.x_of((box.begin_us + box.end_us) / 2)),
                    static_cast<int>(layout.row_top(0, 40)));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.front().front().toInt(), box.request);
    QCOMPARE(view->selected_request(), box.request);
    const auto rows = window_->work_table()->selectionModel()->selectedRows();
    QCOMPARE(static_cast<size_t>(rows.size()), window_->work_model()->rows_of_request(box.request).size());
    for (const QModelIndex& row : rows) {
      const auto* proxy = static_cast<const QSortFilterProxyModel*>(row.model());
      QCOMPARE(window_->work_model()->request_of_row(proxy->mapToSource(row).row()), box.request);
    }
    const QPoint idle(view->viewport()->width() - 30, static_cast<int>(layout.row_top(0, 200)));  // idle CU of A
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, idle);
    QCOMPARE(view->selected_request(), -1);
  }

  void a_table_row_selects_its_request() {
    QTableView* table = window_->work_table();
    const int last = table->model()->rowCount() - 1;
    table->setCurrentIndex(table->model()->index(last, 0));
    const auto* proxy = static_cast<const QSortFilterProxyModel*>(table->model());
    QCOMPARE(window_->timeline_view()->selected_request(),
             window_->work_model()->request_of_row(proxy->mapToSource(proxy->index(last, 0)).row()));
  }

  void rows_take_the_tallest_height_that_fits() {
    TimelineView* view = window_->timeline_view();
    const auto fits = [view](int row_height) {
      TimelineStyle style = view->style();
      style.row_height = row_height;
      style.reduce_row_height = std::max(2, row_height);
      return TimelineLayout(*view->scene(), style, view->current_viewport()).full_height() <=
             view->viewport()->height();
    };
    const int h = view->style().row_height;
    QVERIFY(h == 1 || fits(h));
    QVERIFY(h == 8 || !fits(h + 1));
    view->set_row_height(12);
    window_->workload_panel()->count_box()->setValue(5);
    QCOMPARE(view->style().row_height, 12);  // a chosen height stays through edits
  }

  void zoom_keeps_the_time_under_the_cursor() {
    TimelineView* view = window_->timeline_view();
    const TimelineLayout before(*view->scene(), view->style(), view->current_viewport());
    const double x = before.plot_rect().left() + 300;
    const double t = before.t_of(x);
    view->zoom(4.0, x);
    const TimelineLayout after(*view->scene(), view->style(), view->current_viewport());
    QVERIFY(std::abs(after.t_of(x) - t) < 1e-6 * view->scene()->end_us);
    const TimelineViewport vp = view->current_viewport();
    QVERIFY(std::abs((vp.t1_us - vp.t0_us) * 4.0 - view->scene()->end_us * 1.02) < 1e-6 * view->scene()->end_us);
    view->zoom_to_fit();
    QCOMPARE(view->current_viewport().t0_us, 0.0);
  }

  // The table models keep Qt's model contracts through edits, resets and sorting.
  void the_models_keep_their_contracts() {
    QAbstractItemModelTester metrics(window_->metrics_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester works(window_->work_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxy(window_->work_table()->model(),
                                   QAbstractItemModelTester::FailureReportingMode::QtTest);
    window_->workload_panel()->count_box()->setValue(16);
    window_->policy_panel(0)->set_knob_text("max_split_per_batch", QStringLiteral("2"));
    window_->work_table()->sortByColumn(WorkTableModel::kDuration, Qt::DescendingOrder);
    window_->workload_panel()->count_box()->setValue(3);
    QCOMPARE(window_->work_model()->rowCount(), window_->side(0)->plan->num_works());
  }

  void exports_write_files() {
    for (const char* name : {"window.png", "window.svg", "window.csv"}) {
      const QString path = testing::output_path(QString::fromLatin1(name));
      QFile::remove(path);
      QVERIFY2(window_->export_to(path), qPrintable(window_->last_error()));
      QVERIFY(QFile::exists(path));
    }
    const QString metrics = testing::output_path(QStringLiteral("window_metrics.csv"));
    QVERIFY(window_->export_metrics_csv(metrics));
    QFile f(metrics);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll().count('\n'), 3);
    QVERIFY(!window_->export_to(testing::output_path(QStringLiteral("window.tiff"))));
  }

  void a_sweep_runs_off_the_ui_thread() {
    SweepView* sweep = window_->sweep_view();
    QSignalSpy finished(sweep, &SweepView::finished);
    sweep->run();
    QVERIFY(finished.wait(120000));
    QVERIFY2(sweep->error().isEmpty(), qPrintable(sweep->error()));
    const SweepLine& line = sweep->line();
    QCOMPARE(line.along_batch, false);
    QCOMPARE(line.x.front(), 1024);
    QCOMPARE(line.x.back(), 131072);
    // The point at the scenario's own context (100000 is not on the grid; check the last point directly).
    sim::Scenario s;
    s.workload.batch.context = 131072;
    const auto want = expected(s);
    QCOMPARE(line.a_us.back(), want.a.prediction->metrics.kernel_us);
    QCOMPARE(line.b_us.back(), want.b.prediction->metrics.kernel_us);
    const SpeedupGrid& grid = sweep->grid();
    QCOMPARE(grid.batches.size(), size_t(9));
    QCOMPARE(grid.contexts.size(), size_t(8));
    for (const CellEdge& e : crossover_edges(grid)) QVERIFY(e.x0 >= 0 && e.x1 <= 8 && e.y0 >= 0 && e.y1 <= 9);
    QVERIFY(!sweep->line_chart()->series().isEmpty());
    QVERIFY(!sweep->heatmap_chart()->series().isEmpty());
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
