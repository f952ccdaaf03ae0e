// mlasim-gui: the policy explorer window, or with --render the same timeline picture written headless (of a
// scenario, or of a measured timeline above its prediction).
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QEventLoop>
#include <QGuiApplication>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "mlasim/gui/export.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/gui/step_view.h"
#include "mlasim/gui/sweep_view.h"
#include "mlasim/gui/validation_plots.h"
#include "mlasim/gui/validation_view.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"

namespace {

bool wants_render(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* flag : {"--render", "--validation-plots"})
      if (std::strcmp(argv[i], flag) == 0 ||
          (std::strncmp(argv[i], flag, std::strlen(flag)) == 0 && argv[i][std::strlen(flag)] == '='))
        return true;
  return false;
}

// Pictures of the window for the documentation, made the same way on every machine.
int take_screenshot(mlasim::gui::MainWindow& window, const std::string& path, const QString& tab, int select) {
  window.show_tab(tab);
  if (tab == QStringLiteral("validation") && select >= 0) {
    // A point of the scatter, not a request: picked as a click would, so the forms show its row.
    window.validation_view()->choose_point(select);
    window.show_tab(tab);
    select = -1;
  }
  if (select >= 0) window.select_request(select);
  if (tab == QStringLiteral("sweep")) {
    QEventLoop wait;
    QObject::connect(window.sweep_view(), &mlasim::gui::SweepView::finished, &wait, &QEventLoop::quit);
    window.sweep_view()->run();
    wait.exec();
  }
  QCoreApplication::processEvents();
  mlasim::gui::write_png(path, window.grab().toImage(), "screenshot");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool render = wants_render(argc, argv);
  // A headless export needs no display: the offscreen platform renders to memory, so it runs on CI machines.
  if (render && std::getenv("QT_QPA_PLATFORM") == nullptr) qputenv("QT_QPA_PLATFORM", "offscreen");
  std::unique_ptr<QGuiApplication> app;
  if (render)
    app = std::make_unique<QGuiApplication>(argc, argv);
  else
    app = std::make_unique<QApplication>(argc, argv);  // Qt takes its own options (-platform ...) out of argv
  QCoreApplication::setApplicationName(QStringLiteral("mlasim-gui"));

  CLI::App cli{"mlasim policy explorer: see, compare and sweep MLA decode split policies"};
  std::string scenario;
  std::string render_path;
  std::string out_path;
  mlasim::gui::ExportOptions options;
  cli.add_option("scenario", scenario, "scenario JSON to open (data/scenarios/*.json)");
  cli.add_option("--render", render_path,
                 "render the timeline of this scenario, or this measured timeline above its prediction, without a "
                 "window (needs --out)");
  cli.add_option("--out", out_path, "file to write with --render: .png, .svg or .csv");
  cli.add_option("--width", options.width, "picture width in pixels (--render)")->capture_default_str();
  cli.add_option("--row-height", options.row_height, "pixels per cluster row (--render)")->capture_default_str();
  std::string screenshot;
  std::string tab = "timeline";
  int select = -1;
  cli.add_option("--screenshot", screenshot, "open the window, save a picture of it to FILE.png and quit");
  cli.add_option("--tab", tab,
                 "the tab --screenshot shows: timeline, plans, sweep (the sweep runs first), validation or step")
      ->check(CLI::IsMember({"timeline", "plans", "sweep", "validation", "step"}))
      ->capture_default_str();
  cli.add_option("--select", select, "the request --screenshot shows selected (validation: the point)");
  std::string open_measurements;
  cli.add_option("--measurements", open_measurements, "measurement file to show in the Validation tab");
  std::string open_timeline;
  cli.add_option("--timeline", open_timeline,
                 "measured timeline (mlasim validate --timeline) to show above the prediction of its plan");
  std::string open_step;
  cli.add_option("--step", open_step,
                 "kernel trace of decode steps (torch.profiler or rocprofv3) to show in the Step tab, its batch the "
                 "scenario's workload and the policy that ran its policy A");
  std::vector<std::string> step_edits;
  cli.add_option("--edit", step_edits, "with --step: an edit as mlasim step --edit takes it; repeat");
  std::string step_op_bytes;
  cli.add_option("--op-bytes", step_op_bytes,
                 "with --step: the bytes each kernel reads and writes, as mlasim step --op-bytes takes them");
  std::string step_batches;
  cli.add_option("--step-batches", step_batches,
                 "with --step: each step's batch, as mlasim step --step-batches takes it");
  std::vector<std::string> measurements;
  std::string gpu = "h100";
  std::string out_dir;
  cli.add_option("--validation-plots", measurements,
                 "measurement CSV(s): draw predicted against measured and the error heatmap without a window");
  cli.add_option("--gpu", gpu, "GPU profile whose rows --validation-plots predicts")->capture_default_str();
  cli.add_option("--out-dir", out_dir, "folder --validation-plots writes <gpu>_scatter.png and <gpu>_heatmap.png to");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }

  try {
    if (!measurements.empty()) {
      if (out_dir.empty()) throw mlasim::InputError("out-dir", "--validation-plots needs --out-dir DIR");
      mlasim::gui::write_validation_plots(measurements, gpu, out_dir);
      return 0;
    }
    if (render) {
      if (out_path.empty()) throw mlasim::InputError("out", "--render needs --out FILE.png, FILE.svg or FILE.csv");
      mlasim::gui::render_file(render_path, out_path, options);
      return 0;
    }
    if (!screenshot.empty()) mlasim::check_writable(screenshot, "screenshot");  // before the window and its work
    mlasim::gui::MainWindow window;
    if (!scenario.empty() && !window.open_scenario(QString::fromStdString(scenario))) {
      std::cerr << "mlasim-gui: error: " << window.last_error().toStdString() << "\n";
      return 2;
    }
    if (!open_measurements.empty() && !window.open_measurements(QString::fromStdString(open_measurements))) {
      std::cerr << "mlasim-gui: error: " << window.last_error().toStdString() << "\n";
      return 2;
    }
    if (!open_timeline.empty() && !window.open_measured_timeline(QString::fromStdString(open_timeline))) {
      std::cerr << "mlasim-gui: error: " << window.last_error().toStdString() << "\n";
      return 2;
    }
    if (!open_step.empty()) {
      QString edits;
      for (const std::string& e : step_edits) edits += QString::fromStdString(e) + QLatin1Char(' ');
      if (!window.open_step_trace(QString::fromStdString(open_step)) ||
          !window.step_view()->set_op_bytes(QString::fromStdString(step_op_bytes)) ||
          !window.step_view()->set_step_batches(QString::fromStdString(step_batches)) ||
          !window.step_view()->set_edits(edits.trimmed())) {
        std::cerr << "mlasim-gui: error: " << window.step_view()->last_error().toStdString() << "\n";
        return 2;
      }
    }
    if (!open_measurements.empty()) window.show_tab(QStringLiteral("validation"));
    window.show();
    if (screenshot.empty()) return app->exec();
    return take_screenshot(window, screenshot, QString::fromStdString(tab), select);
  } catch (const mlasim::InputError& e) {
    std::cerr << "mlasim-gui: error: " << e.what() << "\n";
    return 2;
  }
}
