#pragma once
// The Validation tab: a measurement file predicted with a GPU profile and drawn as predicted against measured
// kernel time, with the summary (rows, MAPE, p90) above it. A click on a point emits rowChosen; the window then
// shows that row's workload and policy in its plan and timeline views.
#include <QWidget>
#include <memory>

#include "mlasim/gui/validation_set.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace mlasim::gui {

class ValidationScatterView;

class ValidationView : public QWidget {
  Q_OBJECT

 public:
  // The first entry of gpu_box(): predict with the GPU the rows name.
  static constexpr int kGpuFromRows = 0;

  explicit ValidationView(QWidget* parent = nullptr);

  // Reads `path` and predicts its rows with the GPU chosen in gpu_box() (from the rows: the GPU they name, else
  // `source.fallback_gpu`). On failure the tab keeps no points, shows one error line and returns false.
  bool open(const QString& path, const ValidationSource& source);
  // Reads the open file again (e.g. with another GPU); false when none is open or it fails as open() does.
  bool reload();

  // The file shown, or nullptr when none is (nothing opened yet, or the last open failed).
  const ValidationSet* data() const { return data_.get(); }
  const QString& error() const { return error_; }

  // Picks point `point` as a click would: selects it and emits rowChosen.
  void choose_point(int point);

  ValidationScatterView* scatter() const { return scatter_; }
  QComboBox* gpu_box() const { return gpu_; }
  QPushButton* open_button() const { return open_button_; }
  QLabel* summary_label() const { return summary_; }
  QLabel* error_label() const { return error_label_; }

 signals:
  // The "Open measurements..." button: the window asks for a file and calls open().
  void openRequested();
  // A point was picked: its row in data()->run.rows.
  void rowChosen(int row);

 private:
  void show_set();
  void show_point_line(int point);

  std::shared_ptr<const ValidationSet> data_;
  QString path_;
  ValidationSource source_;
  QString error_;

  QPushButton* open_button_;
  QComboBox* gpu_;
  QLabel* file_;
  QLabel* summary_;
  QLabel* error_label_;
  QLabel* point_line_;
  ValidationScatterView* scatter_;
};

}  // namespace mlasim::gui
