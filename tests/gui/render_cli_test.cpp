// `mlasim-gui --render`: the README picture from the command line, with no display and no window.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTest>

#include "gui_test_support.h"

using namespace mlasim::gui;

class RenderCliTest : public QObject {
  Q_OBJECT

 private:
  struct Run {
    int code;
    QString err;
  };
  // Runs mlasim-gui with no display and no platform chosen: --render must pick the offscreen one itself.
  static Run run(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(MLASIM_GUI_PATH), args);
    if (!p.waitForFinished(60000)) return {-1, QStringLiteral("timed out")};
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
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

  void render_needs_an_output_file() {
    const Run r = run({QStringLiteral("--render"), QString::fromStdString(testing::readme_scenario_path())});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("--out")), qPrintable(r.err));
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
