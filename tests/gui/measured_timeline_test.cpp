// A measured timeline in the explorer: its lane above the prediction of the same plan (one row per CU that ran
// work, every work, the reduce blocks), each work coloured by the prediction's duration error, and the window
// opening it with its workload, policy and measured-against-predicted metrics.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSpinBox>
#include <QTest>
#include <map>
#include <set>

#include "measured_test_support.h"
#include "mlasim/gui/export.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/gui/measured_lane.h"
#include "mlasim/gui/measured_metrics_model.h"
#include "mlasim/gui/policy_panel.h"
#include "mlasim/gui/text_format.h"
#include "mlasim/gui/timeline_painter.h"
#include "mlasim/gui/work_table_model.h"
#include "mlasim/gui/workload_panel.h"
#include "mlasim/model/input_error.h"

using namespace mlasim;
using namespace mlasim::gui;

class MeasuredTimelineTest : public QObject {
  Q_OBJECT

 private:
  testing::MeasuredExample example_;
  QString path_;
  QString bad_path_;  // the example with a negative duration
  MeasuredCheck checked_;
  TimelineScene scene_;
  TimelineStyle style_;
  QImage image_;

  TimelineLayout layout(const TimelineScene& scene, const QImage& image) const {
    return TimelineLayout(scene, style_, TimelineViewport{image.size(), 0, scene.end_us * 1.02, 0});
  }

  // The row and box of `work` in the measured lane.
  std::pair<int, const sim::TimelineBox*> measured_box(const TimelineLane& lane, int work) const {
    for (int row = 0; row < lane.num_rows(); ++row)
      for (const sim::TimelineBox& b : lane.timeline().rows[static_cast<size_t>(row)])
        if (b.work == work) return {row, &b};
    return {-1, nullptr};
  }

  // The colour at time `t_us` on the first pixel line of measured row `row`.
  QRgb pixel_at(double t_us, int row) const {
    const TimelineLayout l = layout(scene_, image_);
    return image_.pixel(static_cast<int>(l.x_of(t_us)), static_cast<int>(std::lround(l.row_top(0, row)))) & 0xffffff;
  }

  static QRgb rgb(const QColor& c) { return c.rgb() & 0xffffff; }

 private slots:
  void initTestCase() {
    example_ = testing::measured_example();
    path_ = testing::write_measured_timeline(QStringLiteral("measured_example.json"), example_.timeline);
    checked_ = check_timeline_file(path_.toStdString());
    scene_ = make_measured_scene(checked_);
    style_ = export_style(ExportOptions{});
    style_.row_height = 6;  // rows tall enough to read the fixed part and the body apart
    image_ = render_image(scene_, style_, 1400);
    image_.save(testing::output_path(QStringLiteral("measured_example.png")));

    nlohmann::json j = validate::measured_timeline_to_json(example_.timeline);
    for (auto& e : j["traceEvents"])
      if (e.value("cat", "") == "work") {
        e["dur"] = -1;
        break;
      }
    bad_path_ = testing::output_path(QStringLiteral("measured_bad.json"));
    QFile f(bad_path_);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(j.dump()));
  }

  void the_measured_lane_comes_first_with_one_row_per_cu_that_ran_work() {
    QCOMPARE(scene_.lanes.size(), size_t{2});
    const TimelineLane& measured = scene_.lanes[0];
    QCOMPARE(measured.kind, LaneKind::measured);
    QCOMPARE(scene_.lanes[1].kind, LaneKind::predicted);
    QCOMPARE(scene_.lanes[1].plan, checked_.check->evaluation.plan);
    std::set<int> cus;
    for (const auto& w : example_.timeline.works) cus.insert(w.cu);
    QCOMPARE(measured.measured->row_cu, std::vector<int>(cus.begin(), cus.end()));
    QCOMPARE(measured.num_rows(), static_cast<int>(cus.size()));
    QCOMPARE(measured.num_rows(), scene_.lanes[1].plan->active_clusters());  // the plan's busy CUs, no idle one
  }

  void every_measured_work_is_a_box_on_its_cu() {
    const TimelineLane& measured = scene_.lanes[0];
    std::map<int, int> cu_of_work;
    for (const auto& w : example_.timeline.works) cu_of_work[w.work] = w.cu;
    std::map<int, int> seen;
    for (int row = 0; row < measured.num_rows(); ++row)
      for (const sim::TimelineBox& b : measured.timeline().rows[static_cast<size_t>(row)]) {
        QCOMPARE(measured.measured->row_cu[static_cast<size_t>(row)], cu_of_work.at(b.work));
        ++seen[b.work];
      }
    QCOMPARE(seen.size(), cu_of_work.size());
    QCOMPARE(static_cast<int>(seen.size()), checked_.check->evaluation.plan->num_works());
    for (const auto& [work, count] : seen) QCOMPARE(count, 1);
    QCOMPARE(measured.timeline().reduce.size(), example_.timeline.reduce.size());
    QVERIFY(!measured.timeline().reduce.empty());
  }

  // The timelines recorded on the H100 (docs/validation.md §7): SM pairs, overlapping workgroups, many reduce
  // blocks. Each gives one row per SM that ran work and every measured run a box.
  void recorded_timelines_keep_every_run_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(QStringLiteral(MLASIM_DATA_DIR "/measurements/h100/timelines"));
    for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
      QTest::newRow(qPrintable(f.fileName())) << f.filePath();
  }
  void recorded_timelines_keep_every_run() {
    QFETCH(QString, path);
    const MeasuredCheck checked = check_timeline_file(path.toStdString());
    const TimelineScene scene = make_measured_scene(checked);
    const TimelineLane& measured = scene.lanes[0];
    std::set<int> cus;
    std::multiset<std::pair<int, int>> runs, boxes;  // (cu, work)
    for (const auto& w : checked.timeline->works) {
      cus.insert(w.cu);
      runs.insert({w.cu, w.work});
    }
    QCOMPARE(measured.measured->row_cu, std::vector<int>(cus.begin(), cus.end()));
    for (int row = 0; row < measured.num_rows(); ++row)
      for (const sim::TimelineBox& b : measured.timeline().rows[static_cast<size_t>(row)])
        boxes.insert({measured.measured->row_cu[static_cast<size_t>(row)], b.work});
    QCOMPARE(boxes, runs);
    QCOMPARE(measured.timeline().reduce.size(), checked.timeline->reduce.size());
    QCOMPARE(scene.end_us, std::max(checked.timeline->end_us(), scene.lanes[1].timeline().end_us()));
  }

  void the_measured_and_predicted_lanes_share_the_time_axis() {
    const double measured_end = checked_.timeline->end_us();
    QCOMPARE(scene_.end_us, std::max(measured_end, scene_.lanes[1].timeline().end_us()));
    QVERIFY(measured_end > scene_.lanes[1].timeline().end_us());  // the slowed work ends last
  }

  void error_colours_map_the_sign() {
    const QColor too_fast = error_color(-30), right = error_color(0), too_slow = error_color(30);
    QVERIFY(too_fast.blue() > too_fast.red());
    QVERIFY(too_slow.red() > too_slow.blue());
    QCOMPARE(right.red(), right.green());
    QCOMPARE(right.green(), right.blue());
    QCOMPARE(error_color(2), right);  // within half a step: no error to show
    QCOMPARE(error_color(80), error_color(50));
    QCOMPARE(error_color(-400), error_color(-50));
    QVERIFY(error_color(-50).blue() - error_color(-50).red() > too_fast.blue() - too_fast.red());
    QVERIFY(error_fixed_color(30).lightness() < too_slow.lightness());
    for (int step = 1; step < kErrorSteps; ++step)
      QVERIFY(error_step((step - kErrorSteps / 2) * kErrorStepPct) >
              error_step((step - 1 - kErrorSteps / 2) * kErrorStepPct));
  }

  void each_work_is_drawn_in_its_error_colour() {
    const TimelineLane& measured = scene_.lanes[0];
    const auto check_work = [&](int work, double expected_error) {
      const auto [row, box] = measured_box(measured, work);
      QVERIFY(box);
      QVERIFY(std::abs(measured.measured->duration_error_pct(work) - expected_error) < 0.5);
      const double body = (box->stream_us + box->end_us) / 2;
      QCOMPARE(pixel_at(body, row), rgb(error_color(expected_error)));
      QVERIFY(box->stream_us - box->begin_us > 0.5);
      QCOMPARE(pixel_at((box->begin_us + box->stream_us) / 2, row), rgb(error_fixed_color(expected_error)));
    };
    check_work(example_.too_fast_work, -50);
    check_work(example_.too_slow_work, +50);
    // Every other work is measured as predicted.
    const int other = measured.timeline().rows[0].front().work;
    QVERIFY(other != example_.too_fast_work && other != example_.too_slow_work);
    check_work(other, 0);
  }

  void the_predicted_lane_stays_coloured_by_request() {
    const TimelineLayout l = layout(scene_, image_);
    const sim::TimelineBox& b = scene_.lanes[1].timeline().rows[0].front();
    const QRgb p = image_.pixel(static_cast<int>(l.x_of((b.begin_us + b.end_us) / 2)),
                                static_cast<int>(std::lround(l.row_top(1, 0))));
    QCOMPARE(testing::request_of_pixel(p, scene_.num_requests, style_.background), b.request);
  }

  void the_tooltip_compares_the_work_with_its_prediction() {
    const TimelineLane& measured = scene_.lanes[0];
    const auto [row, box] = measured_box(measured, example_.too_slow_work);
    const TimelineLayout l = layout(scene_, image_);
    const auto hit = l.hit_test(QPointF(l.x_of((box->begin_us + box->end_us) / 2), l.row_top(0, row) + 0.5));
    QVERIFY(hit.has_value());
    QCOMPARE(hit->lane, 0);
    const QString tip = box_tooltip(scene_, *hit);
    const validate::WorkComparison* c = measured.measured->comparison(box->work);
    QVERIFY(c);
    QVERIFY2(tip.startsWith(QStringLiteral("measured · CU %1 · work %2\nrequest %3")
                                .arg(measured.measured->row_cu[static_cast<size_t>(row)])
                                .arg(box->work)
                                .arg(box->request)),
             qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("kv pages [%1, %2)").arg(box->kv_start).arg(box->kv_end)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("fixed part to %1").arg(format_us(box->stream_us))), qPrintable(tip));
    QVERIFY2(
        tip.contains(
            QStringLiteral("predicted %1 → %2").arg(format_us(c->predicted_begin_us), format_us(c->predicted_end_us))),
        qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("duration error +50.0 % (predicted too slow)")), qPrintable(tip));
  }

  // Two workgroups on one CU at once: a long run under short ones stays visible and found after they end.
  void overlapping_runs_on_one_cu_are_all_found() {
    auto timeline = std::make_shared<validate::MeasuredTimeline>(*checked_.timeline);
    const int cu = timeline->works.front().cu;
    timeline->works.clear();
    timeline->works.push_back({0, 0, cu, 0, 1, 100});
    for (int w = 1; w <= 7; ++w) timeline->works.push_back({w, 1, cu, w * 8.0, w * 8.0 + 1, w * 8.0 + 6});
    validate::attach_plan_facts(*timeline, *checked_.check->evaluation.plan);
    const TimelineScene scene = make_scene({make_measured_lane({path_.toStdString(), timeline, checked_.check})});
    QCOMPARE(scene.lanes[0].num_rows(), 1);
    const QImage image = render_image(scene, style_, 1400);
    const TimelineLayout l = layout(scene, image);
    const double y = l.row_top(0, 0) + 0.5;
    for (const auto& [t, work] :
         std::vector<std::pair<double, int>>{{90, 0}, {4, 0}, {10, 1}, {15, 0}, {60, 7}, {75, 0}}) {
      const auto hit = l.hit_test(QPointF(l.x_of(t), y));
      QVERIFY(hit.has_value());
      QCOMPARE(scene.lanes[0].timeline().rows[0][static_cast<size_t>(hit->index)].work, work);
    }
    // The long run is drawn past the short ones: the painter's first-visible search must not skip it.
    QImage zoomed(900, 200, QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&zoomed);
    const TimelineViewport vp{zoomed.size(), 80, 100, 0};
    TimelinePainter::paint(painter, scene, vp, style_);
    painter.end();
    const TimelineLayout z(scene, style_, vp);
    const QRgb p = zoomed.pixel(static_cast<int>(z.x_of(90)), static_cast<int>(std::lround(z.row_top(0, 0))));
    QCOMPARE(p & 0xffffff, rgb(error_color(scene.lanes[0].measured->duration_error_pct(0))));
  }

  // CSV: a row per measured work with its CU, a row per measured reduce block, then the predicted lane's rows.
  void the_csv_export_lists_the_measured_runs_first() {
    const QString path = testing::output_path(QStringLiteral("measured_example.csv"));
    export_scene(scene_, path.toStdString(), ExportOptions{});
    QFile csv(path);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    const TimelineLane& measured = scene_.lanes[0];
    const TimelineLane& predicted = scene_.lanes[1];
    const size_t boxes = static_cast<size_t>(2 * predicted.plan->num_works()) + measured.timeline().reduce.size() +
                         predicted.timeline().reduce.size();
    QCOMPARE(static_cast<size_t>(lines.size()), boxes + 1);
    const sim::TimelineBox& first = measured.timeline().rows[0].front();
    const QByteArray prefix = QStringLiteral("measured,aiter-v1,work,%1,%2,%3,")
                                  .arg(measured.measured->row_cu[0])
                                  .arg(first.work)
                                  .arg(first.request)
                                  .toUtf8();
    QVERIFY2(lines[1].startsWith(prefix), lines[1].constData());
    const QByteArray reduce_prefix = QStringLiteral("measured,aiter-v1,reduce,%1,%2,,")
                                         .arg(measured.timeline().reduce.front().cu)
                                         .arg(measured.timeline().reduce.front().block)
                                         .toUtf8();
    QVERIFY2(lines[static_cast<qsizetype>(predicted.plan->num_works()) + 1].startsWith(reduce_prefix),
             lines[static_cast<qsizetype>(predicted.plan->num_works()) + 1].constData());
  }

  void a_bad_file_names_the_field() {
    try {
      check_timeline_file(bad_path_.toStdString());
      QFAIL("a negative duration was accepted");
    } catch (const InputError& e) {
      QCOMPARE(e.field(), std::string("timeline"));
      QVERIFY2(QString(e.what()).contains(QStringLiteral("].dur: must be")), e.what());
      QVERIFY2(QString(e.what()).contains(bad_path_), e.what());
    }
  }

  // The window: the forms take the timeline's workload and policy, A is its checked plan, the measured lane comes
  // first and the metrics panel compares the two timelines.
  void the_window_opens_a_measured_timeline() {
    MainWindow window;
    window.resize(1400, 900);
    QVERIFY2(window.open_measured_timeline(path_), qPrintable(window.last_error()));
    QVERIFY(window.measured_timeline());
    QVERIFY(window.workload_panel()->workload() == example_.timeline.workload);
    QCOMPARE(window.policy_panel(0)->spec(), std::string("aiter-v1"));
    const auto scene = window.scene();
    QCOMPARE(scene->lanes.size(), size_t{3});
    QCOMPARE(scene->lanes[0].kind, LaneKind::measured);
    QCOMPARE(scene->lanes[1].name, QStringLiteral("A"));
    QCOMPARE(scene->lanes[2].name, QStringLiteral("B"));
    const sim::Evaluation& predicted = window.measured_timeline()->check->evaluation;
    QCOMPARE(window.side(0)->prediction->metrics.kernel_us, predicted.prediction->metrics.kernel_us);
    QCOMPARE(window.side(0)->plan->num_works(), predicted.plan->num_works());
    QVERIFY(!window.measured_label()->isHidden());
    QCOMPARE(window.work_model()->lane(), 1);  // "works of A" still lists A's works, under the measured lane

    MeasuredMetricsModel* m = window.measured_metrics_model();
    const validate::TimelineComparison& c = window.measured_timeline()->check->comparison;
    const auto value = [m](const char* key, int column) {
      return m->data(m->index(m->row_of(key), column), Qt::UserRole).toDouble();
    };
    QCOMPARE(m->rowCount(), 10);
    QCOMPARE(value("stage1_us", MeasuredMetricsModel::kMeasured), c.measured.stage1_us);
    QCOMPARE(value("stage1_us", MeasuredMetricsModel::kPredicted), c.predicted.stage1_us);
    QCOMPARE(value("tail_us", MeasuredMetricsModel::kMeasured), c.measured.tail_us);
    QCOMPARE(value("tail_us", MeasuredMetricsModel::kDifference), c.predicted.tail_us - c.measured.tail_us);
    QCOMPARE(value("reduce_us", MeasuredMetricsModel::kPredicted), c.predicted.reduce_us);
    QCOMPARE(value("mean_fixed_us", MeasuredMetricsModel::kMeasured), c.measured.mean_fixed_us);
    QCOMPARE(value("idle_share_pct", MeasuredMetricsModel::kMeasured), 100.0 * c.measured.idle_fraction);
    QCOMPARE(value("active_cus", MeasuredMetricsModel::kMeasured), static_cast<double>(scene->lanes[0].num_rows()));
    QCOMPARE(value("duration_mape_pct", MeasuredMetricsModel::kDifference), c.duration.mape_pct);
    QCOMPARE(value("duration_p90_pct", MeasuredMetricsModel::kDifference), c.duration.p90_pct);
    QCOMPARE(value("start_p50_us", MeasuredMetricsModel::kDifference), c.start_abs_p50_us);
    QCOMPARE(value("start_p90_us", MeasuredMetricsModel::kDifference), c.start_abs_p90_us);
    QVERIFY(c.duration.mape_pct > 0);  // two of the works were measured off their prediction
    QVERIFY(!m->data(m->index(m->row_of("duration_mape_pct"), MeasuredMetricsModel::kMeasured)).isValid());
  }

  void an_edit_of_the_workload_closes_the_measured_lane() {
    MainWindow window;
    QVERIFY(window.open_measured_timeline(path_));
    window.workload_panel()->context_box()->setValue(4096);
    QVERIFY(!window.measured_timeline());
    QCOMPARE(window.scene()->lanes.size(), size_t{2});
    QCOMPARE(window.scene()->lanes[0].kind, LaneKind::predicted);
    QCOMPARE(window.measured_metrics_model()->rowCount(), 0);
    QVERIFY(window.measured_label()->isHidden());
  }

  void a_bad_timeline_leaves_the_window_as_it_was() {
    MainWindow window;
    const auto before = window.scene();
    const std::string spec = window.policy_panel(0)->spec();
    QVERIFY(!window.open_measured_timeline(bad_path_));
    QVERIFY2(window.last_error().contains(QStringLiteral("dur")), qPrintable(window.last_error()));
    QCOMPARE(window.scene(), before);
    QCOMPARE(window.policy_panel(0)->spec(), spec);
    QVERIFY(!window.measured_timeline());
  }
};

QTEST_MAIN(MeasuredTimelineTest)
#include "measured_timeline_test.moc"
