// The Step tab: a committed decode-step trace opened in the explorer, its batch the explorer's workload and the
// policy that ran policy A; edits typed above it give the same step `mlasim step` gives, drawn as two lanes.
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

#include "gui_test_support.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/gui/step_picture.h"
#include "mlasim/gui/step_view.h"
#include "mlasim/sim/scenario.h"

using namespace mlasim;
using namespace mlasim::gui;

namespace {

const QString kTrace = QStringLiteral(MLASIM_DATA_DIR "/measurements/h100/step/before_r1.json.gz");
const QString kScenario = QStringLiteral(MLASIM_DATA_DIR "/scenarios/h100_decode_step_split.json");

// Pixels of `color` in a row of the picture, between x0 and x1.
int pixels_of(const QImage& image, int y, const QColor& color, int x0, int x1) {
  int n = 0;
  for (int x = x0; x < x1; ++x) n += QColor(image.pixel(x, y)) == color;
  return n;
}

}  // namespace

class StepTabTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> window_;

 private slots:
  void init() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    QVERIFY(window_->open_scenario(kScenario));
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }
  void cleanup() { window_.reset(); }

  void a_trace_opens_in_the_step_tab() {
    QVERIFY2(window_->open_step_trace(kTrace), qPrintable(window_->last_error()));
    QCOMPARE(window_->current_tab(), QStringLiteral("step"));
    const StepView* view = window_->step_view();
    QVERIFY(view->what_if().has_value());
    // As measured: 20 steps of 8 layers, nothing edited, both lanes the same step.
    QCOMPARE(view->what_if()->before.size(), size_t{20});
    QCOMPARE(view->what_if()->before_summary.layers, 8.0);
    QCOMPARE(view->what_if()->after_summary.time_us, view->what_if()->before_summary.time_us);
    QVERIFY(!view->picture().isNull());
    // Nothing edited, no band drawn.
    QCOMPARE(pixels_of(view->picture(), 44 + 70 + 26 + 35, step_band_color(), 0, view->picture().width()), 0);
  }

  void edits_give_what_mlasim_step_gives() {
    QVERIFY(window_->open_step_trace(kTrace));
    StepView* view = window_->step_view();
    QVERIFY2(view->set_edits(QStringLiteral("policy=fixed:splits=4")), qPrintable(view->last_error()));
    // The CLI's prediction of this edit on this trace (mlasim step with the scenario's workload, without --op-bytes).
    QVERIFY(std::abs(view->what_if()->after_summary.time_us - 1214.15) < 0.01);
    QVERIFY(view->summary().contains(QStringLiteral("policy=fixed:splits=4")));
    // The trace's spread and whether traces as long confirm the change, as the CLI's spread and confirm lines say.
    const validate::StepSpread& spread = view->what_if()->measured_spread;
    QVERIFY(spread.mean_ci95_us > 0);
    QVERIFY2(
        view->summary().contains(QStringLiteral("\nspread: ") + QString::fromStdString(validate::spread_text(
                                                                    spread, view->what_if()->before_summary.time_us))),
        qPrintable(view->summary()));
    QVERIFY2(view->summary().contains(QStringLiteral("\nconfirm: +-5 % of the predicted change")),
             qPrintable(view->summary()));
    // The policy edit's 90 % band, from the H100 profile's held-out ratio error of the 128-head class.
    QVERIFY(view->what_if()->band_us.has_value());
    QVERIFY2(view->summary().contains(
                 QStringLiteral("90 % band of the edited step: %1 .. ")
                     .arg(view->what_if()->after_summary.time_us - *view->what_if()->band_us, 0, 'f', 1)),
             qPrintable(view->summary()));
    // The edited lane (the second) ends where its step ends: right of it the lane is empty.
    const QImage& p = view->picture();
    const QColor attention = step_class_color("mla_stage1");
    const int measured_y = 44 + 35, edited_y = 44 + 70 + 26 + 35;
    QVERIFY(pixels_of(p, measured_y, attention, 0, p.width()) > pixels_of(p, edited_y, attention, 0, p.width()));
    QCOMPARE(pixels_of(p, edited_y, attention, p.width() * 3 / 4, p.width()), 0);
    // The policy edit's band: a whisker across the edited lane's middle at the step's end, in its own colour.
    QVERIFY(pixels_of(p, edited_y, step_band_color(), 0, p.width()) > 10);
    QCOMPARE(pixels_of(p, measured_y, step_band_color(), 0, p.width()), 0);
  }

  void the_ops_bytes_weigh_a_removed_op_as_mlasim_step_does() {
    QVERIFY(window_->open_step_trace(kTrace));
    StepView* view = window_->step_view();
    QVERIFY(view->set_edits(QStringLiteral("remove=copy")));
    const double without = view->what_if()->after_summary.time_us;
    QVERIFY2(view->set_op_bytes(QStringLiteral(MLASIM_DATA_DIR "/measurements/h100/step/op_bytes.json")),
             qPrintable(view->last_error()));
    // The CLI's prediction of this edit with these bytes (data/measurements/h100/step/predictions.json, round 1).
    QVERIFY2(std::abs(view->what_if()->after_summary.time_us - 1702.57) < 0.01,
             qPrintable(QString::number(view->what_if()->after_summary.time_us)));
    QVERIFY(view->what_if()->after_summary.time_us < without);
    // The removal's band: each removed copy times the H100 profile's measured error per removed kernel.
    QVERIFY(view->what_if()->band_us.has_value());
    QVERIFY2(view->summary().contains(QStringLiteral("the fuse and remove edits within the p90")),
             qPrintable(view->summary()));
    bool named = false;
    for (const QLabel* l : view->findChildren<QLabel*>())
      named |= l->text() == QStringLiteral("op bytes: op_bytes.json");
    QVERIFY(named);
    // A bad file keeps the bytes that were read; none again gives the step without them.
    QVERIFY(!view->set_op_bytes(QStringLiteral("/nonexistent/op_bytes.json")));
    QVERIFY(view->last_error().startsWith(QStringLiteral("op-bytes: ")));
    QVERIFY(std::abs(view->what_if()->after_summary.time_us - 1702.57) < 0.01);
    QVERIFY(view->set_op_bytes(QString()));
    QCOMPARE(view->what_if()->after_summary.time_us, without);
  }

  void step_batches_give_each_step_its_contexts_as_mlasim_step_does() {
    QVERIFY(window_->open_step_trace(kTrace));
    StepView* view = window_->step_view();
    QVERIFY(view->set_edits(QStringLiteral("policy=fixed:splits=4")));
    const double at_4096 = view->what_if()->after_summary.time_us;
    sim::Scenario s = window_->scenario();
    s.workload.batch = sim::BatchSpec::uniform(16, 8192);
    window_->set_scenario(s);
    const double at_8192 = view->what_if()->after_summary.time_us;
    s.workload.batch = sim::BatchSpec::uniform(16, 4096);
    window_->set_scenario(s);
    QCOMPARE(view->what_if()->after_summary.time_us, at_4096);
    // A file that gives each of the trace's 20 steps 16 requests of 8192 tokens: the step the workload at 8192
    // gives, with the workload panel still at 4096.
    QTemporaryDir dir;
    const auto write = [&](const QString& name, const std::string& text) {
      QFile f(dir.filePath(name));
      if (!f.open(QIODevice::WriteOnly)) return QString();
      f.write(text.data(), static_cast<qint64>(text.size()));
      return f.fileName();
    };
    std::string steps;
    for (int i = 0; i < 20; ++i) steps += std::string(i ? ", " : "") + R"({"requests": 16, "context": 8192})";
    const QString file = write(QStringLiteral("batches.json"), R"({"steps": [)" + steps + "]}");
    QVERIFY2(view->set_step_batches(file), qPrintable(view->last_error()));
    QCOMPARE(view->what_if()->after_summary.time_us, at_8192);
    bool named = false;
    for (const QLabel* l : view->findChildren<QLabel*>())
      named |= l->text() == QStringLiteral("step batches: batches.json");
    QVERIFY(named);
    // A file of another step count keeps the one that was read; none again gives the workload's contexts.
    const QString short_file = write(QStringLiteral("short.json"), R"({"steps": [{"requests": 16, "context": 8}]})");
    QVERIFY(!view->set_step_batches(short_file));
    QVERIFY2(view->last_error().startsWith(QStringLiteral("step-batches: ")), qPrintable(view->last_error()));
    QCOMPARE(view->what_if()->after_summary.time_us, at_8192);
    QVERIFY(view->set_step_batches(QString()));
    QCOMPARE(view->what_if()->after_summary.time_us, at_4096);
    // A file belongs to its trace: opening a trace drops it.
    QVERIFY(view->set_step_batches(file));
    QVERIFY(window_->open_step_trace(kTrace));
    QCOMPARE(view->what_if()->after_summary.time_us, at_4096);
    named = false;
    for (const QLabel* l : view->findChildren<QLabel*>()) named |= l->text() == QStringLiteral("step batches: none");
    QVERIFY(named);
  }

  void a_bad_edit_keeps_the_last_step() {
    QVERIFY(window_->open_step_trace(kTrace));
    StepView* view = window_->step_view();
    QVERIFY(view->set_edits(QStringLiteral("remove=copy")));
    const double kept = view->what_if()->after_summary.time_us;
    QVERIFY(!view->set_edits(QStringLiteral("remove=copy bogus=1")));
    QVERIFY(view->last_error().startsWith(QStringLiteral("edit: 'bogus=1'")));
    QCOMPARE(view->what_if()->after_summary.time_us, kept);
    QVERIFY(!view->set_edits(QStringLiteral("metadata=gpu-magic")));
    QCOMPARE(view->what_if()->after_summary.time_us, kept);
    // A good edit after them applies.
    QVERIFY(view->set_edits(QStringLiteral("gaps=0")));
    QCOMPARE(view->what_if()->after_summary.gaps_us, 0.0);
  }

  void the_workload_follows_the_explorer() {
    QVERIFY(window_->open_step_trace(kTrace));
    StepView* view = window_->step_view();
    QVERIFY(view->set_edits(QStringLiteral("policy=fixed:splits=4")));
    const double at_4096 = view->what_if()->after_summary.time_us;
    // Another context in the workload panel re-predicts the same edit for it; the batch stays the trace's own
    // (its RoPE + KV-write grid: 16 requests), whatever the panel says.
    sim::Scenario s = window_->scenario();
    s.workload.batch = sim::BatchSpec::uniform(64, 16384);
    window_->set_scenario(s);
    const double at_16384 = view->what_if()->after_summary.time_us;
    QVERIFY(at_16384 != at_4096);
    QCOMPARE(view->what_if()->tokens_per_step, 16.0);
    bool labelled = false;
    for (const QLabel* l : view->findChildren<QLabel*>())
      labelled |= l->text().contains(QStringLiteral("batch from grid.x of /rope_kv_write_kernel/ in 20 of 20 steps"));
    QVERIFY(labelled);
    // With another tab in front, an edit of the forms waits until the Step tab is shown again.
    QVERIFY(window_->show_tab(QStringLiteral("timeline")));
    s.workload.batch = sim::BatchSpec::uniform(64, 4096);
    window_->set_scenario(s);
    QCOMPARE(view->what_if()->after_summary.time_us, at_16384);
    QVERIFY(window_->show_tab(QStringLiteral("step")));
    QCOMPARE(view->what_if()->after_summary.time_us, at_4096);
  }

  void a_missing_trace_is_named() {
    QVERIFY(!window_->open_step_trace(QStringLiteral("/nonexistent/trace.json")));
    QVERIFY(window_->last_error().startsWith(QStringLiteral("trace: ")));
  }
};

QTEST_MAIN(StepTabTest)
#include "step_tab_test.moc"
