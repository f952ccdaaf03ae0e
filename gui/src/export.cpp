#include "mlasim/gui/export.h"

#include <QBuffer>
#include <QFileInfo>
#include <QSaveFile>
#include <QSvgGenerator>
#include <fmt/format.h>

#include "mlasim/gui/measured_lane.h"
#include "mlasim/model/csv_cell.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/metrics_format.h"
#include "mlasim/sim/report.h"
#include "mlasim/sim/scenario.h"
#include "mlasim/validate/gzip_file.h"

namespace mlasim::gui {
namespace {

// Spec strings hold commas: quote the field, doubling quotes inside (RFC 4180).
TimelineViewport full_viewport(const TimelineScene& scene, const TimelineStyle& style, int width) {
  TimelineViewport vp;
  vp.size = QSize(width, 1);
  vp.t0_us = 0;
  vp.t1_us = scene.end_us > 0 ? scene.end_us * 1.02 : 1.0;
  vp.size.setHeight(TimelineLayout(scene, style, vp).full_height());
  return vp;
}

}  // namespace

TimelineStyle export_style(const ExportOptions& options) {
  TimelineStyle style;
  style.row_height = std::max(1, options.row_height);
  style.reduce_row_height = std::max(2, options.row_height);
  style.font.setPixelSize(11);
  return style;
}

QImage render_image(const TimelineScene& scene, const TimelineStyle& style, int width) {
  const TimelineViewport vp = full_viewport(scene, style, width);
  QImage image(vp.size, QImage::Format_ARGB32_Premultiplied);
  image.fill(style.background);
  QPainter painter(&image);
  TimelinePainter::paint(painter, scene, vp, style);
  return image;
}

std::string timeline_csv(const TimelineScene& scene) {
  std::string out =
      "lane,source,kind,row,work_or_tile,request,partial,qo_start,qo_end,kv_start,kv_end,partials,begin_us,end_us\n";
  for (const TimelineLane& lane : scene.lanes) {
    const std::string name = lane.name.toStdString();
    const std::string source = csv_cell(lane.source.toStdString());
    const sim::Timeline& tl = lane.timeline();
    for (size_t row = 0; row < tl.rows.size(); ++row)
      for (const sim::TimelineBox& b : tl.rows[row]) {
        const sim::WorkInfo& w = lane.plan->works[static_cast<size_t>(b.work)];
        const size_t shown_row = lane.measured ? static_cast<size_t>(lane.measured->row_cu[row]) : row;
        out += fmt::format("{},{},work,{},{},{},{},{},{},{},{},,{},{}\n", name, source, shown_row, b.work, b.request,
                           b.partial ? 1 : 0, w.qo_start, w.qo_end, b.kv_start, b.kv_end, b.begin_us, b.end_us);
      }
    for (const sim::ReduceBox& r : tl.reduce) {
      if (lane.kind == LaneKind::measured) {
        out += fmt::format("{},{},reduce,{},{},,0,,,,,,{},{}\n", name, source, r.cu, r.block, r.begin_us, r.end_us);
        continue;
      }
      out += fmt::format("{},{},reduce,{},{},{},0,,,,,{},{},{}\n", name, source, r.cu, r.tile, r.request, r.partials,
                         r.begin_us, r.end_us);
    }
  }
  return out;
}

std::string metrics_csv(const sim::WorkloadContext& ctx, const sim::Evaluation* a, const sim::Evaluation* b) {
  const auto writer = sim::make_report_writer("csv");
  std::vector<sim::ReportRow> rows;
  for (const sim::Evaluation* side : {a, b})
    if (side && side->prediction) rows.push_back(sim::report_row(*side, ctx));
  return rows.size() == 2 ? writer->comparison(sim::Comparison::of(rows[0], rows[1])) : writer->table(rows);
}

void write_whole_file(const std::string& path, const QByteArray& bytes, const std::string& field) {
  QSaveFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
    throw InputError(field, path + ": cannot write (" + file.errorString().toStdString() + ")");
}

void write_png(const std::string& path, const QImage& image, const std::string& field) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) throw InputError(field, path + ": the PNG encoder failed");
  write_whole_file(path, bytes, field);
}

void export_scene(const TimelineScene& scene, const std::string& path, const ExportOptions& options) {
  if (options.width < 400 || options.width > 20000)
    throw InputError("width", "must be 400..20000 pixels, got " + std::to_string(options.width));
  if (options.row_height < 1 || options.row_height > 64)
    throw InputError("row-height", "must be 1..64 pixels, got " + std::to_string(options.row_height));
  const QString suffix = QFileInfo(QString::fromStdString(path)).suffix().toLower();
  const TimelineStyle style = export_style(options);
  if (suffix == "png") {
    write_png(path, render_image(scene, style, options.width));
  } else if (suffix == "svg") {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    const TimelineViewport vp = full_viewport(scene, style, options.width);
    // Qt's SVG writer emits pattern brushes that its own reader (and some browsers) cannot resolve.
    TimelineStyle svg_style = style;
    svg_style.hatch = false;
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(vp.size);
    svg.setViewBox(QRect(QPoint(0, 0), vp.size));
    svg.setTitle(QStringLiteral("mlasim timeline"));
    {
      QPainter painter(&svg);
      TimelinePainter::paint(painter, scene, vp, svg_style);
    }
    write_whole_file(path, bytes);
  } else if (suffix == "csv") {
    const std::string text = timeline_csv(scene);
    write_whole_file(path, QByteArray(text.data(), static_cast<qsizetype>(text.size())));
  } else {
    throw InputError("out", path + ": must end in .png, .svg or .csv");
  }
}

namespace {

void render_scenario(const sim::Scenario& scenario, const std::string& out_path, const ExportOptions& options) {
  const sim::WorkloadContext ctx = sim::resolve(scenario.workload);
  const sim::Evaluation a = sim::evaluate(scenario.spec("A", 0), ctx);
  const sim::Evaluation b = sim::evaluate(scenario.spec("B", 1), ctx);
  export_scene(make_scene(&a, &b), out_path, options);
}

}  // namespace

void render_scenario(const std::string& scenario_path, const std::string& out_path, const ExportOptions& options) {
  render_scenario(sim::load_scenario(scenario_path), out_path, options);
}

void render_file(const std::string& path, const std::string& out_path, const ExportOptions& options) {
  const nlohmann::json j = validate::read_json_maybe_gzip(path, "render");  // a timeline may be gzip-compressed
  if (validate::is_measured_timeline(j))
    return export_scene(make_measured_scene(check_timeline_json(j, path)), out_path, options);
  sim::Scenario scenario;
  try {
    scenario = sim::scenario_from_json(j);
  } catch (const InputError& e) {
    throw InputError("scenario", path + ": " + e.what());  // as sim::load_scenario says it
  }
  render_scenario(scenario, out_path, options);
}

}  // namespace mlasim::gui
