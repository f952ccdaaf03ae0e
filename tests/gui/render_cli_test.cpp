// `mlasim-gui --render`: the README picture from the command line, with no display and no window, and a measured
// timeline (told apart from a scenario by its content) drawn above its prediction.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTest>

#include "gui_test_support.h"
#include "measured_test_support.h"
#include "mlasim/gui/export.h"
#include "mlasim/gui/measured_lane.h"

using namespace mlasim::gui;

class RenderCliTest : public QObject {
  Q_OBJECT

 private:
  struct Run {
    int code;
    QString err;
  };
  // Runs mlasim-gui with no display and no platform chosen: --render must pick the offscreen one itself.
  static Run run(const QStringList& args, const QString& platform = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    if (!platform.isEmpty()) env.insert(QStringLiteral("QT_QPA_PLATFORM"), platform);
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(MLASIM_GUI_PATH), args);
    if (!p.waitForFinished(60000)) return {-1, QStringLiteral("timed out")};
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
  }

  // A measured timeline (still one by its content) with one thing broken: "dur" a negative duration, "work" a
  // work index the plan lacks, "policy" an unknown policy.
  static QString write_broken_timeline(const QString& breakage) {
    nlohmann::json j = mlasim::validate::measured_timeline_to_json(testing::measured_example().timeline);
    if (breakage == "policy") j["otherData"]["mlasim"]["policy"] = "no-such-policy";
    for (auto& e : j["traceEvents"]) {
      if (e.value("cat", "") != "work") continue;
      if (breakage == "dur") e["dur"] = -1;
      if (breakage == "work") e["args"]["work"] = 100000;
      break;
    }
    if (!mlasim::validate::is_measured_timeline(j)) qFatal("the broken timeline no longer reads as one");
    const QString path = testing::output_path(QStringLiteral("bad_measured_%1.json").arg(breakage));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QByteArray::fromStdString(j.dump()));
    return path;
  }

 private slots:
  void renders_the_readme_picture() {
    const QString out = testing::output_path(QStringLiteral("readme_render.png"));
    QFile::remove(out);
    const Run r = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path()),
                       QStringLiteral("--out"), out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QImage image(out);
    QCOMPARE(image.width(), 1400);
    QVERIFY(image.height() > 2 * 256 * 2);
  }

  void renders_svg_and_csv() {
    for (const char* ext : {"svg", "csv"}) {
      const QString out = testing::output_path(QStringLiteral("readme_render.%1").arg(ext));
      QFile::remove(out);
      const Run r = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path()),
                         QStringLiteral("--out"), out});
      QVERIFY2(r.code == 0, qPrintable(r.err));
      QVERIFY(QFile(out).size() > 1000);
    }
  }

  void a_bad_scenario_is_one_line_and_exit_2() {
    const QString bad = testing::output_path(QStringLiteral("bad_scenario.json"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"workload": {"heads": 12}, "policies": {"A": "aiter-v1", "B": "aiter-v1"}})");
    f.close();
    const QString out = testing::output_path(QStringLiteral("never.png"));
    QFile::remove(out);
    const Run r = run({QStringLiteral("--render"), bad, QStringLiteral("--out"), out});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("heads")), qPrintable(r.err));
    QCOMPARE(r.err.count(QStringLiteral("mlasim-gui: error:")), 1);
    QVERIFY(!QFile::exists(out));
  }

  void renders_a_measured_timeline_above_its_prediction() {
    const testing::MeasuredExample example = testing::measured_example();
    const QString timeline = testing::write_measured_timeline(QStringLiteral("render_measured.json"), example.timeline);
    const QString out = testing::output_path(QStringLiteral("render_measured.png"));
    QFile::remove(out);
    const Run r = run({QStringLiteral("--render"), timeline, QStringLiteral("--out"), out});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // The size of the pair: the measured lane (a row per CU with work) above the predicted one (a row per CU).
    const TimelineScene scene = make_measured_scene(check_timeline_file(timeline.toStdString()));
    const TimelineStyle style = export_style(ExportOptions{});
    const QImage image(out);
    QCOMPARE(image.width(), 1400);
    QCOMPARE(image.height(), TimelineLayout(scene, style, TimelineViewport{QSize(1400, 1), 0, 1, 0}).full_height());
    QVERIFY(scene.lanes[0].num_rows() < scene.lanes[1].num_rows());
    const QString svg = testing::output_path(QStringLiteral("render_measured.svg"));
    QFile::remove(svg);
    const Run s = run({QStringLiteral("--render"), timeline, QStringLiteral("--out"), svg});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    QVERIFY(QFile(svg).size() > 1000);
  }

  void a_bad_measured_timeline_is_one_line_and_exit_2_data() {
    QTest::addColumn<QString>("field");  // what the one line must name
    QTest::addColumn<QString>("breakage");
    QTest::newRow("negative duration") << QStringLiteral("].dur") << QStringLiteral("dur");
    QTest::newRow("a work the plan lacks") << QStringLiteral("work 100000") << QStringLiteral("work");
    QTest::newRow("unknown policy") << QStringLiteral("no-such-policy") << QStringLiteral("policy");
  }
  void a_bad_measured_timeline_is_one_line_and_exit_2() {
    QFETCH(QString, field);
    QFETCH(QString, breakage);
    const QString bad = write_broken_timeline(breakage);
    const QString out = testing::output_path(QStringLiteral("never_measured.png"));
    QFile::remove(out);
    const Run r = run({QStringLiteral("--render"), bad, QStringLiteral("--out"), out});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.count(QStringLiteral("mlasim-gui: error:")), 1);
    const QString line = r.err.mid(r.err.indexOf(QStringLiteral("mlasim-gui: error:"))).trimmed();
    QVERIFY2(line.startsWith(QStringLiteral("mlasim-gui: error: timeline: ") + bad + ": "), qPrintable(line));
    QVERIFY2(line.contains(field), qPrintable(line));
    QVERIFY2(!line.contains('\n'), qPrintable(line));
    QVERIFY(!QFile::exists(out));
  }

  // `--timeline` opens the window with the measured lane; a file that does not read stops with the one line.
  void the_window_opens_a_measured_timeline_from_the_command_line() {
    const QString timeline =
        testing::write_measured_timeline(QStringLiteral("window_measured.json"), testing::measured_example().timeline);
    const QString shot = testing::output_path(QStringLiteral("window_measured.png"));
    QFile::remove(shot);
    const Run r = run({QStringLiteral("--timeline"), timeline, QStringLiteral("--screenshot"), shot},
                      QStringLiteral("offscreen"));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(!QImage(shot).isNull());
    const Run bad = run({QStringLiteral("--timeline"), write_broken_timeline(QStringLiteral("dur")),
                         QStringLiteral("--screenshot"), shot},
                        QStringLiteral("offscreen"));
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("].dur")), qPrintable(bad.err));
  }

  void render_needs_an_output_file() {
    const Run r = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path())});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--out")), qPrintable(r.err));
  }

  // Every picture the explorer writes goes through a rename, checked before the work: a folder that does not exist
  // is one line and exit 2, and nothing is left behind.
  void outputs_in_a_missing_folder_are_refused_before_any_work() {
    const QString missing = testing::output_path(QStringLiteral("no_such_folder"));
    const QString measurements =
        QStringLiteral(MLASIM_DATA_DIR) + "/measurements/h100/campaign_standard-v1_590702c.csv";
    const Run plots = run({QStringLiteral("--validation-plots"), measurements, QStringLiteral("--gpu"),
                           QStringLiteral("h100"), QStringLiteral("--out-dir"), missing});
    QCOMPARE(plots.code, 2);
    QVERIFY2(plots.err.contains(QStringLiteral("mlasim-gui: error: out-dir: ")), qPrintable(plots.err));
    QCOMPARE(plots.err.count(QStringLiteral("mlasim-gui: error:")), 1);
    const Run shot = run({QStringLiteral("--screenshot"), missing + "/shot.png"}, QStringLiteral("offscreen"));
    QCOMPARE(shot.code, 2);
    QVERIFY2(shot.err.contains(QStringLiteral("mlasim-gui: error: screenshot: ")), qPrintable(shot.err));
    const Run render = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path()),
                            QStringLiteral("--out"), missing + "/x.png"});
    QCOMPARE(render.code, 2);
    QVERIFY2(render.err.contains(QStringLiteral("mlasim-gui: error: out: ")), qPrintable(render.err));
    QVERIFY(!QFile::exists(missing));
  }

  void an_unknown_output_type_is_refused() {
    const QString out = testing::output_path(QStringLiteral("picture.gif"));
    const Run r = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path()),
                       QStringLiteral("--out"), out});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral(".png, .svg or .csv")), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
  }
};

QTEST_MAIN(RenderCliTest)
#include "render_cli_test.moc"
