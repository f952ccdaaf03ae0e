#include "mlasim/gui/work_table_model.h"

namespace mlasim::gui {

WorkTableModel::WorkTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void WorkTableModel::set_lane(std::shared_ptr<const TimelineScene> scene, int lane) {
  beginResetModel();
  scene_ = std::move(scene);
  lane_ = lane;
  boxes_.clear();
  if (scene_ && lane >= 0 && lane < static_cast<int>(scene_->lanes.size())) {
    const auto& rows = scene_->lanes[static_cast<size_t>(lane)].timeline().rows;
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t i = 0; i < rows[r].size(); ++i) boxes_.emplace_back(static_cast<int>(r), static_cast<int>(i));
  }
  endResetModel();
}

const sim::TimelineBox& WorkTableModel::box(int row) const {
  const auto [r, i] = boxes_[static_cast<size_t>(row)];
  return scene_->lanes[static_cast<size_t>(lane_)].timeline().rows[static_cast<size_t>(r)][static_cast<size_t>(i)];
}

int WorkTableModel::request_of_row(int row) const { return row >= 0 && row < rowCount() ? box(row).request : -1; }

std::vector<int> WorkTableModel::rows_of_request(int request) const {
  std::vector<int> rows;
  for (int row = 0; row < rowCount(); ++row)
    if (box(row).request == request) rows.push_back(row);
  return rows;
}

int WorkTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(boxes_.size());
}

int WorkTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant WorkTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  if (role != Qt::DisplayRole && role != Qt::UserRole && role != Qt::TextAlignmentRole) return {};
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  const sim::TimelineBox& b = box(index.row());
  const TimelineLane& lane = scene_->lanes[static_cast<size_t>(lane_)];
  const sim::WorkInfo& w = lane.plan->works[static_cast<size_t>(b.work)];
  const bool display = role == Qt::DisplayRole;
  const auto time = [display](double us) -> QVariant {
    return display ? QVariant(QString::number(us, 'f', 2)) : QVariant(us);
  };
  switch (index.column()) {
    case kCluster: return boxes_[static_cast<size_t>(index.row())].first;
    case kWork: return b.work;
    case kRequest: return b.request;
    case kBatchIdx: return w.batch_idx;
    case kQoStart: return w.qo_start;
    case kQoEnd: return w.qo_end;
    case kKvStart: return b.kv_start;
    case kKvEnd: return b.kv_end;
    case kPages: return b.kv_end - b.kv_start;
    case kPartial:
      if (display) return w.is_partial() ? QString::number(w.partial_qo_loc) : tr("final");
      return w.partial_qo_loc;
    case kBegin: return time(b.begin_us);
    case kEnd: return time(b.end_us);
    case kDuration: return time(b.end_us - b.begin_us);
    default: return {};
  }
}

QVariant WorkTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  static const char* const kNames[kColumns] = {"CU",       "work",     "request", "batch_idx", "qo_start",
                                               "qo_end",   "kv_start", "kv_end",  "pages",     "partial row",
                                               "begin µs", "end µs",   "µs"};
  return section >= 0 && section < kColumns ? tr(kNames[section]) : QVariant();
}

}  // namespace mlasim::gui
