#pragma once
// Pictures of a validation report, drawn headless: measured against predicted time (log-log, the +-10 % and
// +-20 % bands, one colour per kernel class) and the error over batch x context (one cell per power-of-two band,
// coloured by the mean absolute error, signed mean in the cell). The scatter's axes and drawing are shared with the
// Validation tab (validation_scatter.h).
#include <QImage>
#include <QString>
#include <string>
#include <vector>

#include "mlasim/validate/calibration_run.h"
#include "mlasim/validate/error_report.h"

namespace mlasim::gui {

struct ValidationPoint {
  double measured_us = 0;
  double predicted_us = 0;
  std::string kernel_class;  // validate::kernel_class of the row
  int batch = 0;
  double mean_context = 0;  // tokens per request, averaged over a ragged batch
  size_t row = 0;           // the row in the report's run.rows
  double error_pct() const { return 100.0 * (predicted_us / measured_us - 1.0); }
};

// The kernel_us rows of a report.
std::vector<ValidationPoint> validation_points(const validate::CalibrationRun& run);

// "h100: 1136 rows, MAPE 58.4 %, p90 90.6 %": the summary in the pictures' titles and above the Validation tab.
QString validation_summary(const std::string& gpu, const validate::ErrorStats& stats);

QImage validation_scatter(const std::vector<ValidationPoint>& points, const QString& title, QSize size = {960, 800});
QImage validation_heatmap(const std::vector<ValidationPoint>& points, const QString& title, QSize size = {960, 700});

// Reads the measurement files, predicts every row with `gpu`'s profile and writes `<dir>/<gpu>_scatter.png` and
// `<dir>/<gpu>_heatmap.png`. Throws InputError naming the file or the output it cannot write.
void write_validation_plots(const std::vector<std::string>& measurement_files, const std::string& gpu,
                            const std::string& dir);

}  // namespace mlasim::gui
