// The Validation tab: a measurement file in, one point per kernel-time row out, and a click on a point puts that
// row's workload and policy into the explorer's forms, plan and timeline.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include "gui_test_support.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/gui/metrics_model.h"
#include "mlasim/gui/policy_panel.h"
#include "mlasim/gui/timeline_view.h"
#include "mlasim/gui/validation_scatter_view.h"
#include "mlasim/gui/validation_view.h"
#include "mlasim/gui/workload_panel.h"
#include "mlasim/sim/plan_json.h"
#include "mlasim/sim/policy_spec.h"

using namespace mlasim;
using namespace mlasim::gui;

namespace {

// Six rows of data/measurements/h100/campaign_standard-v1_590702c.csv (its lines 2, 24, 31, 127, 15, 823):
// uniform and ragged batches, 16 to 128 heads, qlen 1 and 3, bf16 and fp8 KV, pages 1 and 64, a 32-SM subset,
// and the policies aiter-v1, flashmla, fixed and aiter-nonpersistent.
const QString kSample = QStringLiteral(MLASIM_GUI_TEST_DATA_DIR "/h100_campaign_sample.csv");

// What each line of the sample holds, read off the file by hand.
struct SampleRow {
  int line;
  const char* policy;
  int batch;
  int context;  // 0: ragged
  int heads;
  int qlen;
  int clusters;
  double measured_us;
};
const SampleRow kRows[] = {
    {2, "aiter-v1", 9, 1280, 64, 3, 0, 51.13599821925163},
    {3, "aiter-v1", 9, 0, 32, 1, 0, 76.06399804353714},
    {4, "aiter-v1", 45, 3700, 32, 3, 32, 601.79203748703},
    {5, "flashmla", 14, 2709, 16, 1, 0, 27.52000093460083},
    {6, "fixed:splits=4", 5, 193, 128, 3, 0, 308.6399734020233},
    {7, "aiter-nonpersistent", 11, 863, 16, 1, 0, 21.376000717282295},
};

}  // namespace

class ValidationTabTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> window_;

  ValidationView* tab() const { return window_->validation_view(); }
  ValidationScatterView* scatter() const { return tab()->scatter(); }

  static QString write_file(const QString& name, const QByteArray& bytes) {
    const QString path = testing::output_path(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(bytes);
    return path;
  }

  // The point drawn for the sample's line `line`.
  int point_of_line(int line) const {
    const ValidationSet* set = tab()->data();
    for (size_t i = 0; i < set->points.size(); ++i)
      if (set->run.rows[set->points[i].row].row.line == line) return static_cast<int>(i);
    return -1;
  }

  // What a knob's editor shows, as the spec writes it.
  static QString knob_text(QWidget* editor) {
    if (auto* spin = qobject_cast<QSpinBox*>(editor)) return QString::number(spin->value());
    if (auto* choice = qobject_cast<QComboBox*>(editor)) return choice->currentText();
    return QStringLiteral("(no editor)");
  }

  QPoint pixel_of(int point) const {
    return scatter()->layout().position(scatter()->points()[static_cast<size_t>(point)]).toPoint();
  }

 private slots:
  void init() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    QVERIFY(window_->show_tab(QStringLiteral("validation")));
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }
  void cleanup() { window_.reset(); }

  void the_sample_gives_one_point_per_row() {
    QVERIFY2(window_->open_measurements(kSample), qPrintable(window_->last_error()));
    const ValidationSet* set = tab()->data();
    QVERIFY(set);
    // The explorer starts on mi355x; the rows name h100, and that is the profile they are predicted with.
    QCOMPARE(window_->workload_panel()->gpu_box()->currentText(), QStringLiteral("mi355x"));
    QCOMPARE(set->gpu, std::string("h100"));
    QCOMPARE(set->format, validate::MeasurementFormat::csv);
    QCOMPARE(set->points.size(), std::size(kRows));
    QCOMPARE(scatter()->points().size(), std::size(kRows));
    for (size_t i = 0; i < std::size(kRows); ++i) {
      const ValidationPoint& p = set->points[i];
      const validate::MeasurementRow& row = set->run.rows[p.row].row;
      QCOMPARE(row.line, kRows[i].line);
      QCOMPARE(row.policy, std::string(kRows[i].policy));
      QCOMPARE(p.measured_us, kRows[i].measured_us);
      QVERIFY(p.predicted_us > 0);
      QCOMPARE(p.kernel_class, validate::kernel_class(set->run.rows[p.row]));
    }
    QCOMPARE(set->stats.rows, 6);
    QVERIFY(tab()->summary_label()->text().startsWith(QStringLiteral("h100: 6 rows, MAPE ")));
    QVERIFY(tab()->summary_label()->text().contains(QStringLiteral("p90")));
    QVERIFY(tab()->error_label()->isHidden());
  }

  void the_hit_test_maps_each_point_to_its_row() {
    QVERIFY2(window_->open_measurements(kSample), qPrintable(window_->last_error()));
    const std::vector<ValidationPoint>& points = scatter()->points();
    // The sample's points lie apart on the screen, so each pixel has one answer.
    for (size_t i = 0; i < points.size(); ++i)
      for (size_t j = i + 1; j < points.size(); ++j) {
        const QPointF d = scatter()->layout().position(points[i]) - scatter()->layout().position(points[j]);
        QVERIFY2(d.manhattanLength() > 12, qPrintable(QStringLiteral("points %1 and %2").arg(i).arg(j)));
      }
    for (const SampleRow& r : kRows) {
      const int point = point_of_line(r.line);
      QVERIFY(point >= 0);
      const QPointF at = scatter()->layout().position(points[static_cast<size_t>(point)]);
      // The pixel the point is drawn at, and a pixel at its edge, both find it.
      QCOMPARE(scatter()->point_at(at), point);
      QCOMPARE(scatter()->point_at(at + QPointF(3, -2)), point);
      QCOMPARE(tab()->data()->run.rows[points[static_cast<size_t>(point)].row].row.line, r.line);
    }
    QCOMPARE(scatter()->point_at(QPointF(2, 2)), -1);  // the corner, outside the plot
    // The tooltip names the row.
    const QString tip = scatter()->tooltip(point_of_line(4));
    for (const char* part : {"line 4: aiter-v1", "batch 45", "context 3700", "32 heads", "qlen 3", "bf16/fp8",
                             "page 64", "clusters 32", "measured 601.8 µs", "predicted "})
      QVERIFY2(tip.contains(QString::fromUtf8(part)), qPrintable(part + QStringLiteral(" in ") + tip));
  }

  void a_click_on_a_point_shows_its_row_in_the_views_data() {
    QTest::addColumn<int>("line");
    for (const SampleRow& r : kRows) QTest::newRow(qPrintable(QStringLiteral("line %1").arg(r.line))) << r.line;
  }
  void a_click_on_a_point_shows_its_row_in_the_views() {
    QFETCH(int, line);
    const SampleRow& want = kRows[line - 2];
    QVERIFY2(window_->open_measurements(kSample), qPrintable(window_->last_error()));
    const std::string b_before = window_->policy_panel(1)->spec();
    const int point = point_of_line(line);
    const ValidationPoint& p = scatter()->points()[static_cast<size_t>(point)];
    const validate::PreparedRow& row = tab()->data()->run.rows[p.row];
    QTest::mouseClick(scatter(), Qt::LeftButton, {}, pixel_of(point));
    QCOMPARE(scatter()->selected(), point);
    QVERIFY2(window_->error_label()->isHidden(), qPrintable(window_->error_label()->text()));

    // The forms hold the row's workload and policy.
    WorkloadPanel* w = window_->workload_panel();
    QCOMPARE(w->gpu_box()->currentText(), QStringLiteral("h100"));
    if (want.context > 0) {
      QCOMPARE(w->batch_kind_box()->currentText(), QStringLiteral("uniform"));
      QCOMPARE(w->count_box()->value(), want.batch);
      QCOMPARE(w->context_box()->value(), want.context);
    } else {
      QCOMPARE(w->batch_kind_box()->currentText(), QStringLiteral("list"));
      QCOMPARE(w->kv_lens_edit()->text(), QStringLiteral("4866, 1946, 7254, 3030, 7104, 33134, 19096, 2315, 15729"));
    }
    QCOMPARE(w->heads_box()->value(), want.heads);
    QCOMPARE(w->qlen_box()->value(), want.qlen);
    QCOMPARE(w->clusters_box()->value(), want.clusters);
    // Policy A is the row's policy with the row's knobs (the panel leaves knobs at their default out of its spec,
    // so "fixed:splits=4" reads "fixed" there).
    const sim::PolicySpec spec = sim::parse_policy_spec(want.policy);
    QCOMPARE(window_->policy_panel(0)->policy_box()->currentText(), QString::fromStdString(spec.name));
    for (const auto& [knob, value] : spec.knobs)
      QCOMPARE(knob_text(window_->policy_panel(0)->knob_editor(knob)), QString::fromStdString(value));
    QCOMPARE(window_->policy_panel(1)->spec(), b_before);  // B stays, to compare against

    // Side A is the plan the row was predicted with, and predicts the same kernel time.
    QVERIFY(testing::same_json(sim::plan_to_json(*window_->side(0)->plan), sim::plan_to_json(row.plan)));
    QCOMPARE(window_->side(0)->prediction->metrics.kernel_us, p.predicted_us);
    MetricsModel* m = window_->metrics_model();
    QCOMPARE(m->data(m->index(m->row_of("kernel_us"), MetricsModel::kA), Qt::UserRole).toDouble(), p.predicted_us);
    QCOMPARE(window_->scene()->num_requests, want.batch);
    QCOMPARE(window_->timeline_view()->scene(), window_->scene());
    QCOMPARE(window_->current_tab(), QStringLiteral("timeline"));
    QVERIFY(window_->scenario().name.find("line " + std::to_string(line)) != std::string::npos);
  }

  // A policy B that cannot plan the row's workload gives way to the row's policy, rather than refusing the row.
  void b_takes_the_rows_policy_when_its_own_does_not_plan() {
    window_->policy_panel(1)->policy_box()->setCurrentText(QStringLiteral("aiter-nonpersistent"));
    QVERIFY2(window_->error_label()->isHidden(), qPrintable(window_->error_label()->text()));
    QVERIFY2(window_->open_measurements(kSample), qPrintable(window_->last_error()));
    tab()->choose_point(point_of_line(3));  // 32 heads, bf16 q with fp8 KV: not a kernel aiter-nonpersistent has
    QVERIFY2(window_->error_label()->isHidden(), qPrintable(window_->error_label()->text()));
    QCOMPARE(window_->policy_panel(0)->spec(), std::string("aiter-v1"));
    QCOMPARE(window_->policy_panel(1)->spec(), std::string("aiter-v1"));
    QCOMPARE(window_->workload_panel()->heads_box()->value(), 32);
    // A row it does plan keeps it on B.
    window_->policy_panel(1)->policy_box()->setCurrentText(QStringLiteral("aiter-nonpersistent"));
    tab()->choose_point(point_of_line(7));
    QCOMPARE(window_->policy_panel(1)->spec(), std::string("aiter-nonpersistent"));
  }

  void a_gpu_chosen_by_hand_predicts_with_that_profile() {
    QVERIFY(window_->open_measurements(kSample));
    const double predicted_h100 = tab()->data()->points.front().predicted_us;
    tab()->gpu_box()->setCurrentText(QStringLiteral("h200"));  // the rows are h100's: none to show
    QVERIFY(!tab()->data());
    QVERIFY2(tab()->error().contains(QStringLiteral("no rows for GPU 'h200' (6 rows of other GPUs)")),
             qPrintable(tab()->error()));
    QVERIFY(scatter()->points().empty());
    tab()->gpu_box()->setCurrentText(QStringLiteral("h100"));
    QVERIFY(tab()->data());
    QCOMPARE(tab()->data()->points.front().predicted_us, predicted_h100);
    QVERIFY(tab()->error_label()->isHidden());
  }

  // An AITER op-test log names no GPU: its rows are the explorer's GPU's, and are predicted with it.
  void a_log_without_a_gpu_takes_the_explorers() {
    window_->workload_panel()->gpu_box()->setCurrentText(QStringLiteral("mi300x"));
    QVERIFY(window_->open_measurements(
        QStringLiteral(MLASIM_GUI_TEST_DATA_DIR "/../../data/aiter_mla_persistent_log.txt")));
    const ValidationSet* set = tab()->data();
    QCOMPARE(set->format, validate::MeasurementFormat::aiter_log);
    QCOMPARE(set->gpu, std::string("mi300x"));
    QCOMPARE(set->points.size(), size_t(4));
    QCOMPARE(set->notes.size(), size_t(1));  // the varlen row, which the log cannot replay
    QVERIFY(tab()->summary_label()->text().startsWith(QStringLiteral("mi300x: 4 rows")));
    QVERIFY(tab()->summary_label()->toolTip().contains(QStringLiteral("varlen")));
  }

  void a_bad_file_shows_one_error_line_and_no_points_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QFile sample(kSample);
    QVERIFY(sample.open(QIODevice::ReadOnly));
    const QByteArray good = sample.readAll();
    QByteArray bad_cell = good;
    bad_cell.replace(",flashmla,14,", ",flashmla,fourteen,");
    QTest::newRow("a bad cell") << bad_cell << "line 5";
    QTest::newRow("a short row") << good + "h100,mla_decode_persistent,aiter-v1,4\n"
                                 << "cells";
    QTest::newRow("an unknown policy") << QByteArray(good).replace(",flashmla,", ",flashmlb,") << "flashmlb";
    QTest::newRow("not a measurement file") << QByteArray("hello\nworld\n") << "";
    QTest::newRow("empty") << QByteArray() << "";
  }
  void a_bad_file_shows_one_error_line_and_no_points() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    QVERIFY(window_->open_measurements(kSample));  // a good file first: the bad one must not leave its points
    const auto scene = window_->scene();
    const QString path =
        write_file(QStringLiteral("bad_measurements_%1.csv").arg(QTest::currentDataTag()).replace(' ', '_'), text);
    QVERIFY(!window_->open_measurements(path));
    QVERIFY(!tab()->data());
    QVERIFY(scatter()->points().empty());
    QVERIFY(!tab()->error_label()->isHidden());
    const QString error = tab()->error_label()->text();
    QVERIFY2(error.contains(path), qPrintable(error));
    QVERIFY2(error.contains(expected), qPrintable(error));
    QVERIFY2(!error.contains('\n'), qPrintable(error));
    QCOMPARE(window_->last_error(), error);
    QVERIFY(tab()->summary_label()->text().isEmpty());
    QCOMPARE(window_->scene(), scene);  // the explorer's views are left alone
  }

  void a_missing_file_says_so() {
    QVERIFY(!window_->open_measurements(QStringLiteral("/nonexistent/measurements.csv")));
    QVERIFY2(tab()->error().contains(QStringLiteral("cannot read '/nonexistent/measurements.csv'")),
             qPrintable(tab()->error()));
    QVERIFY(scatter()->points().empty());
  }
};

QTEST_MAIN(ValidationTabTest)
#include "validation_tab_test.moc"
