#pragma once
// The metrics panel's table: one row per metric (sim::metric_names()), columns A, B and B against A.
// Values are the shared formatter's text (sim::metrics_text); Qt::UserRole gives the number behind a cell.
#include <QAbstractTableModel>
#include <array>
#include <optional>

#include "mlasim/gui/evaluation.h"

namespace mlasim::gui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kA, kB, kBvsA, kColumns };

  explicit MetricsModel(QObject* parent = nullptr);

  // Either side may be missing (nullptr): its column is then empty.
  void set_results(const SideResult* a, const SideResult* b);
  // The row of metric `name` ("kernel_us"), or -1.
  int row_of(const std::string& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Side {
    std::vector<QString> text;   // per metric, from metrics_text
    std::vector<double> value;   // per metric; NaN for the list of splits
  };
  QString comparison(size_t metric) const;
  std::array<std::optional<Side>, 2> sides_;
};

}  // namespace mlasim::gui
