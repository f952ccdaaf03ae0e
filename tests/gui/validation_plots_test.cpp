// Validation pictures: the scatter and heatmap of a report, in the image and from `mlasim-gui --validation-plots`.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTest>

#include "gui_test_support.h"
#include "mlasim/gui/validation_plots.h"

using namespace mlasim::gui;

class ValidationPlotsTest : public QObject {
  Q_OBJECT

 private:
  static int pixels_of(const QImage& image, QRgb rgb) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) n += (image.pixel(x, y) & 0xffffff) == (rgb & 0xffffff);
    return n;
  }

 private slots:
  void the_scatter_draws_each_class_in_its_colour() {
    std::vector<ValidationPoint> points;
    for (int i = 1; i <= 20; ++i) points.push_back({10.0 * i, 12.0 * i, i % 2 ? "wgmma-bf16" : "wgmma-fp8", i, 4096});
    const QImage image = validation_scatter(points, QStringLiteral("test"));
    QCOMPARE(image.size(), QSize(960, 800));
    // Opaque legend dots carry the exact class colours (the points are drawn translucent).
    QVERIFY(pixels_of(image, qRgb(31, 119, 180)) > 20);
    QVERIFY(pixels_of(image, qRgb(44, 160, 44)) > 20);
    QCOMPARE(pixels_of(image, qRgb(214, 39, 40)), 0);  // no pair-class rows, no pair colour
  }

  void the_heatmap_has_one_cell_per_band_pair() {
    std::vector<ValidationPoint> points = {
        {100, 150, "wgmma-bf16", 4, 4096}, {100, 50, "wgmma-bf16", 5, 5000}, {10, 10, "wgmma-fp8", 64, 100}};
    const QImage image = validation_heatmap(points, QStringLiteral("test"));
    QCOMPARE(image.size(), QSize(960, 700));
    // Two cells on a grid of 5 batch bands (4..64) x 7 context bands (64..4096): batch 4-7 x context 4096-8191
    // (two rows) and batch 64-127 x context 64-127 (one row), each about 80 x 115 pixels less borders (more than one
    // cell is coloured); a heatmap of no rows
    // colours nothing.
    const auto coloured = [](const QImage& im) {
      int n = 0;
      for (int y = 50; y < 630; ++y)
        for (int x = 110; x < 680; ++x) n += (im.pixel(x, y) & 0xffffff) != 0xffffff;
      return n;
    };
    QVERIFY2(coloured(image) > 10000, qPrintable(QString::number(coloured(image))));
    QCOMPARE(coloured(validation_heatmap({}, QStringLiteral("empty"))), 0);
  }

  void the_command_writes_both_pictures_for_the_committed_campaign() {
    const QString dir = testing::output_path(QStringLiteral("validation_plots"));
    QDir().mkpath(dir);
    QFile::remove(dir + "/h100_scatter.png");
    QFile::remove(dir + "/h100_heatmap.png");
    QProcess p;
    p.start(QStringLiteral(MLASIM_GUI_PATH),
            {QStringLiteral("--validation-plots"),
             QStringLiteral(MLASIM_DATA_DIR "/measurements/h100/campaign_standard-v1_590702c.csv"),
             QStringLiteral("--gpu"), QStringLiteral("h100"), QStringLiteral("--out-dir"), dir});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QCOMPARE(QImage(dir + "/h100_scatter.png").width(), 960);
    QCOMPARE(QImage(dir + "/h100_heatmap.png").width(), 960);
  }

  void without_an_output_folder_it_is_one_line_and_exit_2() {
    QProcess p;
    p.start(QStringLiteral(MLASIM_GUI_PATH),
            {QStringLiteral("--validation-plots"),
             QStringLiteral(MLASIM_DATA_DIR "/measurements/h100/campaign_standard-v1_590702c.csv")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("out-dir: --validation-plots needs --out-dir DIR"));
  }
};

QTEST_MAIN(ValidationPlotsTest)
#include "validation_plots_test.moc"
