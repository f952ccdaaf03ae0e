#pragma once
// The metrics panel's table for a measured timeline: per-CU idle and tail facts, measured against predicted
// (stage 1, stage-1 tail, reduce, mean fixed part, idle share of CUs, CUs with work), and the per-work errors
// (duration MAPE and p90, start error p50 and p90), all read off validate::TimelineComparison. Qt::UserRole gives
// the number behind a cell; the name column's Qt::UserRole gives the row's key ("tail_us").
#include <QAbstractTableModel>
#include <optional>
#include <string>

#include "mlasim/validate/timeline_comparison.h"

namespace mlasim::gui {

class MeasuredMetricsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // kDifference: predicted - measured for the facts; the error itself for the per-work error rows.
  enum Column { kName, kMeasured, kPredicted, kDifference, kColumns };

  explicit MeasuredMetricsModel(QObject* parent = nullptr);

  // nullptr: no measured timeline, no rows.
  void set_comparison(const validate::TimelineComparison* comparison);
  bool empty() const { return !comparison_.has_value(); }
  // The row of key `key` ("stage1_us", "tail_us", "reduce_us", "mean_fixed_us", "idle_share_pct", "active_cus",
  // "duration_mape_pct", "duration_p90_pct", "start_p50_us", "start_p90_us"), or -1.
  int row_of(const std::string& key) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::optional<validate::TimelineComparison> comparison_;
};

}  // namespace mlasim::gui
