// mlasim-gui: the policy explorer window, or with --render the same timeline picture written headless.
#include <CLI/CLI.hpp>
#include <QApplication>
#include <QGuiApplication>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "mlasim/gui/export.h"
#include "mlasim/gui/main_window.h"
#include "mlasim/model/input_error.h"

namespace {

bool wants_render(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--render") == 0 || std::strncmp(argv[i], "--render=", 9) == 0) return true;
  return false;
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
  cli.add_option("--render", render_path, "render this scenario's timeline without a window (needs --out)");
  cli.add_option("--out", out_path, "file to write with --render: .png, .svg or .csv");
  cli.add_option("--width", options.width, "picture width in pixels (--render)")->capture_default_str();
  cli.add_option("--row-height", options.row_height, "pixels per cluster row (--render)")->capture_default_str();
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);
  }

  try {
    if (render) {
      if (out_path.empty()) throw mlasim::InputError("out", "--render needs --out FILE.png, FILE.svg or FILE.csv");
      mlasim::gui::render_scenario(render_path, out_path, options);
      return 0;
    }
    mlasim::gui::MainWindow window;
    if (!scenario.empty() && !window.open_scenario(QString::fromStdString(scenario))) {
      std::cerr << "mlasim-gui: error: " << window.last_error().toStdString() << "\n";
      return 2;
    }
    window.show();
    return app->exec();
  } catch (const mlasim::InputError& e) {
    std::cerr << "mlasim-gui: error: " << e.what() << "\n";
    return 2;
  }
}
