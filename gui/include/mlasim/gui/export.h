#pragma once
// Writing what the explorer shows: the timeline picture (PNG, SVG) through the one TimelinePainter, the boxes
// and the metrics as CSV, and the headless `mlasim-gui --render`. Files are written whole or not at all.
#include <QImage>
#include <string>

#include "mlasim/gui/timeline_painter.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {

struct ExportOptions {
  int width = 1400;    // pixels
  int row_height = 2;  // pixels per cluster row
};

// The style of exported pictures: `options.row_height` rows, the default font at a fixed pixel size.
TimelineStyle export_style(const ExportOptions& options);

// The whole scene (every row, the whole time range) at `width` pixels.
QImage render_image(const TimelineScene& scene, const TimelineStyle& style, int width);

// Writes `bytes` (an image: as PNG) through a temporary file renamed into place, so a failed or interrupted write
// leaves the old file or none; InputError(field, "PATH: cannot write (...)") otherwise.
void write_whole_file(const std::string& path, const QByteArray& bytes, const std::string& field = "out");
void write_png(const std::string& path, const QImage& image, const std::string& field = "out");

// One row per box: lane, source, kind (work or reduce), row, work or tile, request, partial, kv range, times. On
// a measured lane, row is the CU and a reduce row names its block (work_or_tile) and no request.
std::string timeline_csv(const TimelineScene& scene);
// The two sides as `mlasim compare --format csv` writes them (sim/report.h); a missing side leaves one plain row.
std::string metrics_csv(const sim::WorkloadContext& ctx, const sim::Evaluation* a, const sim::Evaluation* b);

// Writes the scene as PNG, SVG or CSV, chosen by `path`'s extension. Throws InputError("out", ...) for another
// extension or a file it cannot write.
void export_scene(const TimelineScene& scene, const std::string& path, const ExportOptions& options);

// Loads a scenario, plans and simulates both sides and exports the scene to `out_path`.
void render_scenario(const std::string& scenario_path, const std::string& out_path, const ExportOptions& options);

// `mlasim-gui --render FILE`: a measured timeline (told apart by its content, validate::is_measured_timeline)
// checked against the prediction of its plan and exported as the pair, measured above predicted; anything else
// as a scenario. Errors are InputError naming the file and field; nothing is written then.
void render_file(const std::string& path, const std::string& out_path, const ExportOptions& options);

}  // namespace mlasim::gui
