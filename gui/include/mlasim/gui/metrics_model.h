#pragma once
// The metrics panel's table: one row per metric field (sim::metric_fields()), columns A, B and B against A.
// Cells show each field's text; Qt::UserRole gives the number behind a cell (none for the list of splits).
#include <QAbstractTableModel>
#include <array>
#include <optional>

#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kA, kB, kBvsA, kColumns };

  explicit MetricsModel(QObject* parent = nullptr);

  // Either side may be missing (nullptr): its column is then empty.
  void set_results(const sim::Evaluation* a, const sim::Evaluation* b);
  // The row of metric `name` ("kernel_us"), or -1.
  int row_of(const std::string& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::array<std::optional<sim::Metrics>, 2> sides_;
};

}  // namespace mlasim::gui
