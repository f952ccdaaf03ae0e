// The timeline painter on a QImage: the README scenario's picture, read back pixel by pixel.
#include <QFile>
#include <QSvgRenderer>
#include <QTest>
#include <set>

#include "gui_test_support.h"
#include "mlasim/gui/export.h"
#include "mlasim/gui/text_format.h"
#include "mlasim/gui/timeline_painter.h"
#include "mlasim/gui/timeline_scene.h"
#include "mlasim/model/input_error.h"

using namespace mlasim;
using namespace mlasim::gui;

class PainterTest : public QObject {
  Q_OBJECT

 private:
  testing::Sides sides_;
  TimelineScene scene_;
  TimelineStyle style_;
  QImage image_;
  static constexpr int kWidth = 1400;

  TimelineLayout layout(const QImage& image) const {
    return TimelineLayout(scene_, style_, TimelineViewport{image.size(), 0, scene_.end_us * 1.02, 0});
  }

  // The requests whose colours appear along the first pixel line of cluster row `row` of `lane`.
  std::set<int> requests_in_row(const QImage& image, int lane, int row, int* stray = nullptr) const {
    const TimelineLayout l = layout(image);
    const QRectF plot = l.plot_rect();
    const int y = static_cast<int>(std::lround(l.row_top(lane, row)));
    std::set<int> found;
    for (int x = static_cast<int>(plot.left()); x < static_cast<int>(plot.right()); ++x) {
      const QRgb p = image.pixel(x, y);
      const int r = testing::request_of_pixel(p, scene_.num_requests, style_.background);
      if (r >= 0) {
        found.insert(r);
      } else if (stray && (p & 0xffffff) != (style_.background.rgb() & 0xffffff) &&
                 (p & 0xffffff) != (style_.grid.rgb() & 0xffffff) &&
                 (p & 0xffffff) != (style_.stage_marker.rgb() & 0xffffff)) {
        ++*stray;
      }
    }
    return found;
  }

 private slots:
  void initTestCase() {
    sides_ = testing::evaluate(sim::load_scenario(testing::readme_scenario_path()));
    scene_ = make_scene(&sides_.a, &sides_.b);
    style_ = export_style(ExportOptions{});
    image_ = render_image(scene_, style_, kWidth);
    image_.save(testing::output_path(QStringLiteral("painter_readme.png")));
  }

  void the_image_holds_every_row() {
    QCOMPARE(image_.width(), kWidth);
    QCOMPARE(image_.height(), layout(image_).full_height());
  }

  void rows_with_work_equal_the_active_clusters_data() {
    QTest::addColumn<int>("lane");
    QTest::newRow("A (msb 16)") << 0;
    QTest::newRow("B (msb -1)") << 1;
  }
  void rows_with_work_equal_the_active_clusters() {
    QFETCH(int, lane);
    const TimelineLane& l = scene_.lanes[static_cast<size_t>(lane)];
    int busy = 0;
    for (int row = 0; row < l.num_rows(); ++row) busy += requests_in_row(image_, lane, row).empty() ? 0 : 1;
    QCOMPARE(busy, l.plan->active_clusters());
  }

  void the_readme_plans_use_64_and_256_clusters() {
    QCOMPARE(sides_.a.plan->active_clusters(), 64);
    QCOMPARE(sides_.b.plan->active_clusters(), 256);
  }

  // Each request has its own colour, every box shows its request's colour, and nothing else is drawn in the rows.
  void one_colour_per_request() {
    std::set<QRgb> base;
    for (int r = 0; r < scene_.num_requests; ++r) base.insert(request_color(r).rgb());
    QCOMPARE(static_cast<int>(base.size()), scene_.num_requests);
    std::set<int> seen;
    int stray = 0;
    for (int lane = 0; lane < 2; ++lane) {
      const TimelineLane& l = scene_.lanes[static_cast<size_t>(lane)];
      for (int row = 0; row < l.num_rows(); ++row) {
        std::set<int> expected;
        for (const auto& box : l.timeline().rows[static_cast<size_t>(row)]) expected.insert(box.request);
        const std::set<int> found = requests_in_row(image_, lane, row, &stray);
        QVERIFY2(found == expected, qPrintable(QStringLiteral("lane %1 row %2").arg(lane).arg(row)));
        seen.insert(found.begin(), found.end());
      }
    }
    QCOMPARE(static_cast<int>(seen.size()), 4);
    QCOMPARE(stray, 0);
  }

  // Split fragments (every work of the README plans) show the lighter fill with a hatch in the request's colour.
  void split_fragments_are_hatched() {
    const TimelineLayout l = layout(image_);
    const auto& box = scene_.lanes[0].timeline().rows[0].front();
    QVERIFY(box.partial);
    std::set<QRgb> colours;
    const int y = static_cast<int>(std::lround(l.row_top(0, 0)));
    for (int x = static_cast<int>(l.x_of(box.begin_us)) + 2; x < static_cast<int>(l.x_of(box.end_us)) - 2; ++x)
      colours.insert(image_.pixel(x, y) & 0xffffff);
    QVERIFY(colours.count(partial_fill(box.request).rgb() & 0xffffff));
    QVERIFY(colours.count(request_color(box.request).rgb() & 0xffffff));
  }

  void the_reduce_lane_shows_every_request() {
    for (int lane = 0; lane < 2; ++lane) {
      const TimelineLayout l = layout(image_);
      std::set<int> found;
      for (double y = l.reduce_top(lane, 0); y < l.reduce_top(lane, 0) + l.reduce_lane_height(lane); y += 1)
        for (int x = static_cast<int>(l.plot_rect().left()); x < static_cast<int>(l.plot_rect().right()); ++x) {
          const int r =
              testing::request_of_pixel(image_.pixel(x, static_cast<int>(y)), scene_.num_requests, style_.background);
          if (r >= 0) found.insert(r);
        }
      QCOMPARE(found, (std::set<int>{0, 1, 2, 3}));
    }
  }

  void the_reduce_lane_begins_after_stage_1() {
    for (const auto& lane : scene_.lanes)
      for (const auto& r : lane.timeline().reduce) QVERIFY(r.begin_us >= lane.timeline().stage1_us);
  }

  // Selecting a request keeps its colours and fades every other request's boxes.
  void a_selection_fades_the_other_requests() {
    TimelineStyle selected = style_;
    selected.selected_request = 2;
    const QImage image = render_image(scene_, selected, kWidth);
    image.save(testing::output_path(QStringLiteral("painter_selected.png")));
    const TimelineLayout l = layout(image);
    for (const auto& row : {0, 40}) {  // request 0's fragments, request 2's fragments on A
      const auto& box = scene_.lanes[0].timeline().rows[static_cast<size_t>(row)].front();
      const QRgb p = image.pixel(static_cast<int>(l.x_of((box.begin_us + box.end_us) / 2)),
                                 static_cast<int>(std::lround(l.row_top(0, row))));
      const bool kept = (p & 0xffffff) == (request_color(box.request).rgb() & 0xffffff) ||
                        (p & 0xffffff) == (partial_fill(box.request).rgb() & 0xffffff);
      QCOMPARE(kept, box.request == 2);
      QCOMPARE(testing::request_of_pixel(p, scene_.num_requests, style_.background), box.request);
    }
  }

  void hit_test_finds_the_box_under_a_point() {
    const TimelineLayout l = layout(image_);
    const auto& row = scene_.lanes[1].timeline().rows[100];
    const auto& box = row.front();
    const auto hit = l.hit_test(QPointF(l.x_of((box.begin_us + box.end_us) / 2), l.row_top(1, 100) + 0.5));
    QVERIFY(hit.has_value());
    QCOMPARE(hit->lane, 1);
    QCOMPARE(hit->reduce, false);
    QCOMPARE(hit->row, 100);
    QCOMPARE(hit->index, 0);
  }

  void the_tooltip_names_the_work_and_its_times() {
    const TimelineLayout l = layout(image_);
    const auto& box = scene_.lanes[1].timeline().rows[100].front();
    const auto hit = l.hit_test(QPointF(l.x_of((box.begin_us + box.end_us) / 2), l.row_top(1, 100) + 0.5));
    QVERIFY(hit.has_value());
    const QString tip = box_tooltip(scene_, *hit);
    QVERIFY2(tip.startsWith(QStringLiteral("B · CU 100 · work %1\nrequest %2").arg(box.work).arg(box.request)),
             qPrintable(tip));
    QVERIFY2(tip.contains(format_us(box.end_us - box.begin_us)), qPrintable(tip));
  }

  void hit_test_finds_a_reduce_box() {
    const TimelineLayout l = layout(image_);
    const int index = scene_.lanes[0].reduce_lines[0].front();
    const auto& r = scene_.lanes[0].timeline().reduce[static_cast<size_t>(index)];
    const auto hit = l.hit_test(QPointF(l.x_of((r.begin_us + r.end_us) / 2), l.reduce_top(0, 0) + 0.2));
    QVERIFY(hit.has_value());
    QCOMPARE(hit->reduce, true);
    QCOMPARE(hit->index, index);
  }

  void hit_test_misses_empty_space() {
    const TimelineLayout l = layout(image_);
    QVERIFY(!l.hit_test(QPointF(l.x_of(scene_.end_us), l.row_top(0, 200) + 0.5)).has_value());  // idle CU of A
    QVERIFY(!l.hit_test(QPointF(10, l.row_top(0, 10))).has_value());                            // the header
  }

  // Zoomed in on the first 10 µs, boxes run off both edges and stay inside the plot.
  void a_zoomed_window_draws_only_inside_the_plot() {
    QImage image(900, 600, QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    const TimelineViewport vp{image.size(), 5.0, 15.0, 0};
    TimelinePainter::paint(painter, scene_, vp, style_);
    painter.end();
    const TimelineLayout l(scene_, style_, vp);
    const int y = static_cast<int>(std::lround(l.row_top(0, 0)));
    QCOMPARE(
        testing::request_of_pixel(image.pixel(static_cast<int>(l.plot_rect().left()) + 1, y), 4, style_.background), 0);
    QCOMPARE(
        testing::request_of_pixel(image.pixel(static_cast<int>(l.plot_rect().right()) - 2, y), 4, style_.background),
        0);
    QCOMPARE(
        testing::request_of_pixel(image.pixel(static_cast<int>(l.plot_rect().right()) + 4, y), 4, style_.background),
        -1);
  }

  // Thousands of boxes narrower than a pixel still cover their span: the runs merge instead of vanishing.
  void sub_pixel_boxes_merge_into_runs() {
    auto plan = std::make_shared<sim::Plan>(*sides_.a.plan);
    auto prediction = std::make_shared<sim::Prediction>(*sides_.a.prediction);
    prediction->timeline.stage1_us = 250;  // keeps the stage-1 marker off the measured span
    auto& row = prediction->timeline.rows[0];
    row.clear();
    for (int i = 0; i < 20000; ++i) row.push_back({i * 0.01, i * 0.01 + 0.005, i * 0.01 + 0.01, 0, 0, 0, 1, true});
    const TimelineScene scene = make_scene({make_lane("A", {"synthetic", plan, prediction})});
    const QImage image = render_image(scene, style_, kWidth);
    const TimelineLayout l(scene, style_, TimelineViewport{image.size(), 0, scene.end_us * 1.02, 0});
    const int y = static_cast<int>(std::lround(l.row_top(0, 0)));
    int covered = 0, span = 0;
    for (int x = static_cast<int>(l.x_of(0)) + 1; x < static_cast<int>(l.x_of(200.0)) - 1; ++x, ++span)
      covered += testing::request_of_pixel(image.pixel(x, y), 4, style_.background) == 0 ? 1 : 0;
    QCOMPARE(covered, span);
  }

  void exports_png_svg_and_csv() {
    for (const char* ext : {"png", "svg", "csv"}) {
      const QString path = testing::output_path(QStringLiteral("export.%1").arg(ext));
      QFile::remove(path);
      export_scene(scene_, path.toStdString(), ExportOptions{});
      QVERIFY2(QFile::exists(path), ext);
    }
    QCOMPARE(QImage(testing::output_path(QStringLiteral("export.png"))).size(), image_.size());
    QSvgRenderer svg(testing::output_path(QStringLiteral("export.svg")));
    QVERIFY(svg.isValid());
    QFile csv(testing::output_path(QStringLiteral("export.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
    const size_t boxes = static_cast<size_t>(sides_.a.plan->num_works() + sides_.b.plan->num_works()) +
                         sides_.a.prediction->timeline.reduce.size() + sides_.b.prediction->timeline.reduce.size();
    QCOMPARE(static_cast<size_t>(lines.size()), boxes + 1);
    QVERIFY(lines[1].startsWith("A,aiter-v1:max_split_per_batch=16,work,0,"));
  }

  void an_unknown_extension_writes_nothing() {
    const QString path = testing::output_path(QStringLiteral("export.bmpx"));
    QFile::remove(path);
    QVERIFY_THROWS_EXCEPTION(InputError, export_scene(scene_, path.toStdString(), ExportOptions{}));
    QVERIFY(!QFile::exists(path));
  }
};

QTEST_MAIN(PainterTest)
#include "painter_test.moc"
