#pragma once
// The works of one lane as a table (cluster, work, request, qo and kv ranges, predicted times), for a QTableView
// behind a QSortFilterProxyModel: Qt::UserRole gives numbers to sort by, Qt::DisplayRole the text.
#include <QAbstractTableModel>
#include <memory>
#include <utility>
#include <vector>

#include "mlasim/gui/timeline_scene.h"

namespace mlasim::gui {

class WorkTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kCluster,
    kWork,
    kRequest,
    kBatchIdx,
    kQoStart,
    kQoEnd,
    kKvStart,
    kKvEnd,
    kPages,
    kPartial,
    kBegin,
    kEnd,
    kDuration,
    kColumns
  };

  explicit WorkTableModel(QObject* parent = nullptr);

  // Shows lane `lane` of `scene` (rows in cluster order, then by time); an empty scene or lane clears the table.
  void set_lane(std::shared_ptr<const TimelineScene> scene, int lane);
  int lane() const { return lane_; }
  // The request of table row `row`.
  int request_of_row(int row) const;
  // The rows holding works of `request`.
  std::vector<int> rows_of_request(int request) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  const sim::TimelineBox& box(int row) const;
  std::shared_ptr<const TimelineScene> scene_;
  int lane_ = 0;
  std::vector<std::pair<int, int>> boxes_;  // (cluster row, index in the row)
};

}  // namespace mlasim::gui
