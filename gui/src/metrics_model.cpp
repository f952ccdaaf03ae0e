#include "mlasim/gui/metrics_model.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "mlasim/sim/metrics_format.h"

namespace mlasim::gui {
namespace {

const std::vector<std::string>& names() { return sim::metric_names(); }

bool is_time(const std::string& name) { return name.size() > 3 && name.compare(name.size() - 3, 3, "_us") == 0; }

}  // namespace

MetricsModel::MetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsModel::set_results(const SideResult* a, const SideResult* b) {
  const SideResult* in[2] = {a, b};
  for (int s = 0; s < 2; ++s) {
    if (!in[s] || !in[s]->prediction) {
      sides_[s].reset();
      continue;
    }
    const sim::Metrics& m = in[s]->prediction->metrics;
    Side side;
    side.text.assign(names().size(), QString());
    side.value.assign(names().size(), std::numeric_limits<double>::quiet_NaN());
    // metrics_text writes "name<padding>value" per line, in metric_names() order.
    std::istringstream lines(sim::metrics_text(m));
    std::string line;
    while (std::getline(lines, line)) {
      const size_t gap = line.find(' ');
      const int row = row_of(line.substr(0, gap));
      if (row < 0 || gap == std::string::npos) continue;
      side.text[static_cast<size_t>(row)] = QString::fromStdString(line.substr(line.find_first_not_of(' ', gap)));
    }
    const nlohmann::json j = sim::metrics_to_json(m);
    for (size_t i = 0; i < names().size(); ++i)
      if (j.contains(names()[i]) && j[names()[i]].is_number()) side.value[i] = j[names()[i]].get<double>();
    sides_[s] = std::move(side);
  }
  emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1));
}

int MetricsModel::row_of(const std::string& name) const {
  for (size_t i = 0; i < names().size(); ++i)
    if (names()[i] == name) return static_cast<int>(i);
  return -1;
}

int MetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(names().size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QString MetricsModel::comparison(size_t metric) const {
  if (!sides_[0] || !sides_[1]) return {};
  const double a = sides_[0]->value[metric];
  const double b = sides_[1]->value[metric];
  if (std::isnan(a) || std::isnan(b)) return {};
  const std::string& name = names()[metric];
  // Times: how many times faster B is (A / B). Rates: B / A. Counts: B - A.
  if (is_time(name)) return b > 0 ? QString::number(a / b, 'f', 2) + QStringLiteral("x") : QString();
  if (name == "occupancy") return QStringLiteral("%1%2 pp").arg(b >= a ? "+" : "").arg((b - a) * 100, 0, 'f', 1);
  if (name == "achieved_tbps" || name == "kv_bytes")
    return a > 0 ? QString::number(b / a, 'f', 2) + QStringLiteral("x") : QString();
  return QStringLiteral("%1%2").arg(b >= a ? "+" : "").arg(b - a, 0, 'f', 0);
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const size_t metric = static_cast<size_t>(index.row());
  const int column = index.column();
  if (role == Qt::DisplayRole) {
    if (column == kName) return QString::fromStdString(names()[metric]);
    if (column == kBvsA) return comparison(metric);
    const auto& side = sides_[column == kA ? 0 : 1];
    return side ? side->text[metric] : QString();
  }
  if (role == Qt::UserRole && (column == kA || column == kB)) {
    const auto& side = sides_[column == kA ? 0 : 1];
    if (side && !std::isnan(side->value[metric])) return side->value[metric];
    return {};
  }
  if (role == Qt::TextAlignmentRole && column != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && column == kBvsA && is_time(names()[metric]))
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
