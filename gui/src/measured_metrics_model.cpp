#include "mlasim/gui/measured_metrics_model.h"

#include <array>
#include <cmath>

namespace mlasim::gui {
namespace {

enum class Unit { us, pct, count };

// A fact both timelines have (measured and predicted columns), or a per-work error (one value).
struct Row {
  const char* key;
  const char* label;
  const char* tip;
  Unit unit;
  double (*measured)(const validate::TimelineFacts&);  // nullptr for an error row
  double (*error)(const validate::TimelineComparison&);
};

const std::array<Row, 10>& rows() {
  using Facts = validate::TimelineFacts;
  using Comparison = validate::TimelineComparison;
  static const std::array<Row, 10> table = {{
      {"stage1_us", "stage 1", "last stage-1 end", Unit::us, [](const Facts& f) { return f.stage1_us; }, nullptr},
      {"tail_us", "stage-1 tail", "last stage-1 end - the median end over CUs that ran work", Unit::us,
       [](const Facts& f) { return f.tail_us; }, nullptr},
      {"reduce_us", "reduce", "reduce end - stage-1 end", Unit::us, [](const Facts& f) { return f.reduce_us; },
       nullptr},
      {"mean_fixed_us", "mean fixed part", "mean over works of first KV issue - begin", Unit::us,
       [](const Facts& f) { return f.mean_fixed_us; }, nullptr},
      {"idle_share_pct", "idle share of CUs", "1 - busy / stage 1, over every CU the plan may use", Unit::pct,
       [](const Facts& f) { return 100.0 * f.idle_fraction; }, nullptr},
      {"active_cus", "CUs with work", "CUs (predicted: rows) that ran at least one work", Unit::count,
       [](const Facts& f) { return static_cast<double>(f.active_cus); }, nullptr},
      {"duration_mape_pct", "work duration MAPE", "mean |predicted / measured duration - 1| over the works", Unit::pct,
       nullptr, [](const Comparison& c) { return c.duration.mape_pct; }},
      {"duration_p90_pct", "work duration p90", "90th percentile of |duration error| over the works", Unit::pct,
       nullptr, [](const Comparison& c) { return c.duration.p90_pct; }},
      {"start_p50_us", "work start error p50", "median |predicted - measured begin| over the works", Unit::us, nullptr,
       [](const Comparison& c) { return c.start_abs_p50_us; }},
      {"start_p90_us", "work start error p90", "90th percentile of |predicted - measured begin|", Unit::us, nullptr,
       [](const Comparison& c) { return c.start_abs_p90_us; }},
  }};
  return table;
}

QString text(double value, Unit unit, bool signed_value) {
  const QString sign = signed_value && value >= 0 ? QStringLiteral("+") : QString();
  switch (unit) {
    case Unit::us: return sign + QString::number(value, 'f', 2) + QStringLiteral(" µs");
    case Unit::pct:
      return sign + QString::number(value, 'f', 1) + (signed_value ? QStringLiteral(" pp") : QStringLiteral(" %"));
    case Unit::count: return sign + QString::number(std::lround(value));
  }
  return {};
}

}  // namespace

MeasuredMetricsModel::MeasuredMetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MeasuredMetricsModel::set_comparison(const validate::TimelineComparison* comparison) {
  beginResetModel();
  if (comparison)
    comparison_ = *comparison;
  else
    comparison_.reset();
  endResetModel();
}

int MeasuredMetricsModel::row_of(const std::string& key) const {
  for (size_t i = 0; i < rows().size(); ++i)
    if (key == rows()[i].key) return static_cast<int>(i);
  return -1;
}

int MeasuredMetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !comparison_ ? 0 : static_cast<int>(rows().size());
}

int MeasuredMetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant MeasuredMetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const Row& row = rows()[static_cast<size_t>(index.row())];
  const int column = index.column();
  if (role == Qt::ToolTipRole) return QString::fromUtf8(row.tip);
  if (role == Qt::TextAlignmentRole && column != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (column == kName) {
    if (role == Qt::DisplayRole) return QString::fromUtf8(row.label);
    if (role == Qt::UserRole) return QString::fromUtf8(row.key);
    return {};
  }
  std::optional<double> value;
  if (row.measured) {
    const double measured = row.measured(comparison_->measured);
    const double predicted = row.measured(comparison_->predicted);
    value = column == kMeasured ? measured : column == kPredicted ? predicted : predicted - measured;
  } else if (column == kDifference) {
    value = row.error(*comparison_);
  }
  if (!value) return {};
  if (role == Qt::UserRole) return *value;
  if (role == Qt::DisplayRole) return text(*value, row.unit, row.measured && column == kDifference);
  return {};
}

QVariant MeasuredMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == kDifference)
    return tr("predicted - measured; for the per-work rows, the error over the works");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kName: return tr("measured timeline");
    case kMeasured: return tr("measured");
    case kPredicted: return tr("predicted");
    case kDifference: return tr("error");
    default: return {};
  }
}

}  // namespace mlasim::gui
