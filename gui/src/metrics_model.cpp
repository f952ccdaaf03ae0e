#include "mlasim/gui/metrics_model.h"

#include "mlasim/sim/metric_fields.h"

namespace mlasim::gui {
namespace {

using Field = sim::MetricField;

}  // namespace

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsModel::set_results(const sim::Evaluation* a, const sim::Evaluation* b) {
  const sim::Evaluation* in[2] = {a, b};
  for (size_t s = 0; s < 2; ++s) {
    if (in[s] && in[s]->prediction)
      sides_[s] = in[s]->prediction->metrics;
    else
      sides_[s].reset();
  }
  emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1));
}

int MetricsModel::row_of(const std::string& name) const {
  const auto fields = sim::metric_fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return static_cast<int>(i);
  return -1;
}

int MetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(sim::metric_fields().size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const Field& field = sim::metric_fields()[static_cast<size_t>(index.row())];
  const int column = index.column();
  const auto& side = sides_[column == kB ? 1 : 0];
  if (role == Qt::DisplayRole) {
    if (column == kName) return QString::fromStdString(std::string(field.name));
    if (column == kBvsA)
      return sides_[0] && sides_[1] ? QString::fromStdString(field.compare(*sides_[0], *sides_[1])) : QString();
    return side ? QString::fromStdString(field.text(*side)) : QString();
  }
  if (role == Qt::UserRole && (column == kA || column == kB) && side && field.kind != Field::Kind::list)
    return field.value(*side);
  if (role == Qt::TextAlignmentRole && column != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && column == kBvsA && field.comparison == Field::Comparison::time_ratio)
    return tr("A / B: above 1 means B is faster");
  return {};
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
    case kName: return tr("metric");
    case kA: return tr("A");
    case kB: return tr("B");
    case kBvsA: return tr("B vs A");
    default: return {};
  }
}

}  // namespace mlasim::gui
