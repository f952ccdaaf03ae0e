#include "mlasim/gui/validation_view.h"

#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "mlasim/gui/text_format.h"
#include "mlasim/gui/validation_scatter_view.h"
#include "mlasim/model/gpu.h"

namespace mlasim::gui {

ValidationView::ValidationView(QWidget* parent) : QWidget(parent) {
  open_button_ = new QPushButton(tr("Open measurements..."));
  open_button_->setToolTip(
      tr("A measurement CSV (mlasim validate, the kernel benchmark, public rows), an AITER test_mla_persistent.py "
         "log, or a rocprofv3 kernel trace of the explorer's workload; the format is detected from the content"));
  gpu_ = new QComboBox;
  gpu_->setObjectName(QStringLiteral("validation_gpu"));
  gpu_->addItem(tr("GPU from the rows"));
  for (const std::string& name : builtin_gpu_names()) gpu_->addItem(QString::fromStdString(name));
  gpu_->setToolTip(
      tr("The profile that predicts the rows (only rows measured on it are shown); 'from the rows': "
         "the GPU the rows name, else the explorer's"));
  file_ = new QLabel(tr("No measurements open."));
  file_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* controls = new QHBoxLayout;
  controls->addWidget(open_button_);
  controls->addWidget(new QLabel(tr("GPU")));
  controls->addWidget(gpu_);
  controls->addWidget(file_, 1);

  error_label_ = new QLabel;
  error_label_->setObjectName(QStringLiteral("validation_error"));
  error_label_->setWordWrap(true);
  error_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_label_->setStyleSheet(
      QStringLiteral("background: #fde7e7; color: #8a1111; padding: 6px; border: 1px solid #e3a3a3;"));
  error_label_->hide();
  summary_ = new QLabel;
  summary_->setObjectName(QStringLiteral("validation_summary"));
  QFont bold = summary_->font();
  bold.setBold(true);
  summary_->setFont(bold);
  point_line_ = new QLabel(tr("Click a point to show its plan and predicted timeline."));
  point_line_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Long lines wrap rather than widen the window.
  point_line_->setWordWrap(true);
  summary_->setWordWrap(true);
  scatter_ = new ValidationScatterView;

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(error_label_);
  layout->addWidget(summary_);
  layout->addWidget(scatter_, 1);
  layout->addWidget(point_line_);

  connect(open_button_, &QPushButton::clicked, this, &ValidationView::openRequested);
  connect(gpu_, &QComboBox::currentIndexChanged, this, [this] {
    if (!path_.isEmpty()) reload();
  });
  connect(scatter_, &ValidationScatterView::pointClicked, this, &ValidationView::choose_point);
}

bool ValidationView::open(const QString& path, const ValidationSource& source) {
  path_ = path;
  source_ = source;
  return reload();
}

bool ValidationView::reload() {
  if (path_.isEmpty()) return false;
  ValidationSource source = source_;
  source.gpu = gpu_->currentIndex() == kGpuFromRows ? std::string() : gpu_->currentText().toStdString();
  QApplication::setOverrideCursor(Qt::WaitCursor);  // a campaign of a thousand rows plans for a moment
  try {
    data_ = std::make_shared<const ValidationSet>(load_validation_set(path_.toStdString(), source));
    error_.clear();
  } catch (const std::exception& e) {
    // Nothing half-read stays on screen: the error line replaces the points.
    data_.reset();
    error_ = tr("Cannot show the measurements: %1").arg(QString::fromStdString(e.what()));
  }
  QApplication::restoreOverrideCursor();
  show_set();
  return data_ != nullptr;
}

void ValidationView::show_set() {
  file_->setText(QFileInfo(path_).fileName());
  file_->setToolTip(path_);
  error_label_->setText(error_);
  error_label_->setVisible(!error_.isEmpty());
  point_line_->setText(tr("Click a point to show its plan and predicted timeline."));
  if (!data_) {
    summary_->clear();
    summary_->setToolTip({});
    scatter_->set_points({}, {});
    return;
  }
  std::vector<QString> tooltips;
  for (const ValidationPoint& p : data_->points) tooltips.push_back(validation_tooltip(data_->run.rows[p.row], p));
  scatter_->set_points(data_->points, std::move(tooltips));
  QString summary = validation_summary(data_->gpu, data_->stats) +
                    QStringLiteral(" (%1)").arg(
                        QString::fromStdString(std::string(validate::measurement_format_name(data_->format))));
  const size_t untimed = data_->run.rows.size() - data_->points.size();
  if (untimed > 0) summary += tr("; rows without a kernel time, not drawn: %1").arg(untimed);
  if (data_->other_gpu_rows > 0) summary += tr("; rows of other GPUs, left out: %1").arg(data_->other_gpu_rows);
  QStringList notes;
  for (const std::string& n : data_->notes) notes << QString::fromStdString(n);
  if (!notes.isEmpty()) summary += tr("; rows the importer skipped: %1 (hover for why)").arg(notes.size());
  summary_->setText(summary);
  summary_->setToolTip(notes.join('\n'));
}

void ValidationView::choose_point(int point) {
  if (!data_ || point < 0 || static_cast<size_t>(point) >= data_->points.size()) return;
  scatter_->set_selected(point);
  show_point_line(point);
  emit rowChosen(static_cast<int>(data_->points[static_cast<size_t>(point)].row));
}

void ValidationView::show_point_line(int point) {
  const ValidationPoint& p = data_->points[static_cast<size_t>(point)];
  point_line_->setText(
      tr("Shown in the views: %1").arg(validation_tooltip(data_->run.rows[p.row], p)).replace('\n', "; "));
}

}  // namespace mlasim::gui
