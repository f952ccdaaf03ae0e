#include "mlasim/gui/sweep_view.h"

#include <QBrush>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>

#include "mlasim/gui/text_format.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {
namespace {

QSpinBox* spin(int min, int max, int value) {
  auto* s = new QSpinBox;
  s->setRange(min, max);
  s->setValue(value);
  s->setAccelerated(true);
  return s;
}

QString tokens(int n) {
  if (n >= 1024 && n % 1024 == 0) return QStringLiteral("%1k").arg(n / 1024);
  return QString::number(n);
}

// Diverging colours on log2(speedup): white at 1, blue where B is faster, red where slower, full at 2x / 0.5x.
QColor speedup_color(double s) {
  if (std::isnan(s)) return QColor(200, 200, 200);
  const double t = std::clamp(std::log2(s), -1.0, 1.0);
  const QColor end = t > 0 ? QColor(0x2c, 0x7b, 0xb6) : QColor(0xd7, 0x19, 0x1c);
  const double f = std::abs(t);
  return QColor::fromRgbF(static_cast<float>(1 - f + f * end.redF()), static_cast<float>(1 - f + f * end.greenF()),
                          static_cast<float>(1 - f + f * end.blueF()));
}

// The uniform batches of the sweep share everything but their lengths with the scenario's workload.
sim::SweepGrid grid_for(const sim::Scenario& s, const sim::WorkloadContext& ctx) {
  sim::SweepGrid g;
  g.gpus = {ctx.gpu};
  g.clusters = {ctx.clusters};
  g.policies = {s.policies[0].spec, s.policies[1].spec};
  g.shape = ctx.batch;
  g.qo_len = s.workload.qlen;
  return g;
}

}  // namespace

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  axis_ = new QComboBox;
  axis_->addItems({tr("context"), tr("batch")});
  from_ = spin(1, 1 << 30, 1024);
  to_ = spin(1, 1 << 30, 131072);
  points_ = spin(2, 64, 16);
  max_batch_ = spin(1, 4096, 256);
  min_context_ = spin(1, 1 << 30, 1024);
  max_context_ = spin(1, 1 << 30, 131072);
  run_button_ = new QPushButton(tr("Run sweep"));
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(160);
  status_ = new QLabel;
  status_->setWordWrap(true);
  connect(axis_, &QComboBox::currentIndexChanged, this, [this](int along_batch) {
    from_->setValue(along_batch ? 1 : 1024);
    to_->setValue(along_batch ? 256 : 131072);
  });

  auto* controls = new QHBoxLayout;
  auto* line_form = new QFormLayout;
  line_form->addRow(tr("curve along"), axis_);
  auto* range = new QHBoxLayout;
  range->addWidget(from_);
  range->addWidget(new QLabel(tr("to")));
  range->addWidget(to_);
  range->addWidget(new QLabel(tr("points")));
  range->addWidget(points_);
  line_form->addRow(tr("from"), range);
  auto* heat_form = new QFormLayout;
  heat_form->addRow(tr("heatmap batches 1 to"), max_batch_);
  auto* contexts = new QHBoxLayout;
  contexts->addWidget(min_context_);
  contexts->addWidget(new QLabel(tr("to")));
  contexts->addWidget(max_context_);
  heat_form->addRow(tr("contexts"), contexts);
  controls->addLayout(line_form);
  controls->addLayout(heat_form);
  auto* run_box = new QVBoxLayout;
  run_box->addWidget(run_button_);
  run_box->addWidget(progress_);
  controls->addLayout(run_box);
  controls->addWidget(status_, 1);

  line_view_ = new QChartView(new QChart);
  line_view_->setRenderHint(QPainter::Antialiasing);
  heat_view_ = new QChartView(new QChart);
  auto* charts = new QSplitter(Qt::Horizontal);
  charts->addWidget(line_view_);
  charts->addWidget(heat_view_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(charts, 1);

  connect(heatmap_chart(), &QChart::plotAreaChanged, this, [this] { paint_heatmap_background(); });
  connect(run_button_, &QPushButton::clicked, this, &SweepView::run);
  poll_ = new QTimer(this);
  poll_->setInterval(50);
  connect(poll_, &QTimer::timeout, this, &SweepView::poll);
  status_->setText(tr("Run a sweep to see kernel time against context or batch, and where B beats A."));
}

SweepView::~SweepView() = default;

QChart* SweepView::line_chart() const { return line_view_->chart(); }
QChart* SweepView::heatmap_chart() const { return heat_view_->chart(); }

void SweepView::set_scenario(const sim::Scenario& s) { scenario_ = s; }

bool SweepView::running() const { return sweep_.running(); }

void SweepView::run() {
  if (running()) {
    rerun_ = true;
    return;
  }
  start();
}

void SweepView::start() {
  const sim::Scenario scenario = scenario_;
  const bool along_batch = axis_->currentIndex() == 1;
  const std::vector<int> values = log_spaced(from_->value(), to_->value(), points_->value());
  std::vector<int> batches;
  for (int b = 1; b <= max_batch_->value(); b *= 2) batches.push_back(b);
  const std::vector<int> contexts = log_spaced(
      min_context_->value(), max_context_->value(),
      1 + static_cast<int>(std::lround(
              std::log2(std::max(1.0, double(max_context_->value()) / std::max(1, min_context_->value()))))));
  progress_->setValue(0);
  run_button_->setText(tr("Running..."));
  status_->setText(
      tr("Sweeping %1 and %2...")
          .arg(QString::fromStdString(scenario.policies[0].spec), QString::fromStdString(scenario.policies[1].spec)));
  try {
    const sim::WorkloadContext ctx = sim::resolve(scenario.workload);
    const int requests = ctx.batch.size();
    const int context = static_cast<int>(ctx.batch.total_kv_tokens() / std::max(1, requests));
    sim::SweepGrid line = grid_for(scenario, ctx);
    line.batches = along_batch ? values : std::vector<int>{requests};
    line.contexts = along_batch ? std::vector<int>{context} : values;
    sim::SweepGrid heat = grid_for(scenario, ctx);
    heat.batches = batches;
    heat.contexts = contexts;
    sweep_.start({std::move(line), std::move(heat)});
  } catch (const std::exception& e) {  // InputError from the workload or the grids: nothing started
    show_error(e.what());
    QTimer::singleShot(0, this, [this] { emit finished(); });  // as a sweep that failed on its worker would
    return;
  }
  poll_->start();
}

void SweepView::poll() {
  progress_->setValue(static_cast<int>(1000 * sweep_.progress()));
  std::optional<sim::BackgroundSweep::Outcome> outcome = sweep_.take_if_finished();
  if (!outcome) return;
  poll_->stop();
  show_outcome(*outcome);
  if (rerun_) {
    rerun_ = false;
    start();
  } else {
    emit finished();
  }
}

void SweepView::show_error(const std::string& error) {
  run_button_->setText(tr("Run sweep"));
  progress_->setValue(1000);
  error_ = QString::fromStdString(error);
  status_->setText(tr("Sweep failed: %1").arg(error_));
}

void SweepView::show_outcome(const sim::BackgroundSweep::Outcome& outcome) {
  if (!outcome.error.empty()) {
    show_error(outcome.error);
    return;
  }
  run_button_->setText(tr("Run sweep"));
  progress_->setValue(1000);
  error_.clear();
  const sim::SweepResult& line_result = outcome.results[0];
  const sim::SweepResult& grid_result = outcome.results[1];
  line_ = sweep_line(line_result);
  grid_ = speedup_grid(grid_result);
  draw_line();
  draw_heatmap();
  const auto crossings = line_crossovers(line_);
  QStringList at;
  for (double x : crossings) at << QString::number(x, 'f', 0);
  status_->setText(tr("%1 + %2 configurations planned and simulated. %3")
                       .arg(line_result.points.size() / 2)
                       .arg(grid_result.points.size() / 2)
                       .arg(crossings.empty() ? tr("The curves do not cross in this range.")
                                              : tr("The curves cross at %1 = %2.")
                                                    .arg(line_.along_batch ? tr("batch") : tr("context"),
                                                         at.join(QStringLiteral(", ")))));
}

void SweepView::draw_line() {
  QChart* chart = line_chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  auto* a = new QLineSeries;
  auto* b = new QLineSeries;
  a->setName(QStringLiteral("A"));
  b->setName(QStringLiteral("B"));
  a->setPointsVisible(true);
  b->setPointsVisible(true);
  double y_max = 0;
  for (size_t i = 0; i < line_.x.size(); ++i) {
    if (!std::isnan(line_.a_us[i])) a->append(line_.x[i], line_.a_us[i]);
    if (!std::isnan(line_.b_us[i])) b->append(line_.x[i], line_.b_us[i]);
    y_max =
        std::max({y_max, std::isnan(line_.a_us[i]) ? 0 : line_.a_us[i], std::isnan(line_.b_us[i]) ? 0 : line_.b_us[i]});
  }
  auto* cross = new QScatterSeries;
  cross->setName(tr("crossover (B = A)"));
  cross->setMarkerSize(12);
  cross->setColor(Qt::black);
  for (double x : line_crossovers(line_)) {
    // The crossing's time, interpolated like its position (linear in log x).
    const auto it = std::upper_bound(line_.x.begin(), line_.x.end(), x);
    const size_t i = static_cast<size_t>(std::clamp<ptrdiff_t>(it - line_.x.begin(), 1, ptrdiff_t(line_.x.size()) - 1));
    const double f = (std::log(x) - std::log(line_.x[i - 1])) / (std::log(line_.x[i]) - std::log(line_.x[i - 1]));
    cross->append(x, line_.a_us[i - 1] + f * (line_.a_us[i] - line_.a_us[i - 1]));
  }
  chart->addSeries(a);
  chart->addSeries(b);
  chart->addSeries(cross);
  auto* x_axis = new QLogValueAxis;
  x_axis->setBase(2);
  x_axis->setLabelFormat(QStringLiteral("%.0f"));
  x_axis->setTitleText(line_.along_batch ? tr("batch (requests)") : tr("context (KV tokens per request)"));
  auto* y_axis = new QValueAxis;
  y_axis->setRange(0, y_max * 1.1 + 1e-9);
  y_axis->setTitleText(tr("predicted kernel time (µs)"));
  y_axis->applyNiceNumbers();
  chart->addAxis(x_axis, Qt::AlignBottom);
  chart->addAxis(y_axis, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(x_axis);
    s->attachAxis(y_axis);
  }
  chart->setTitle(tr("<b>Predicted kernel time along %1</b><br>A: %2<br>B: %3")
                      .arg(line_.along_batch ? tr("batch") : tr("context"),
                           QString::fromStdString(scenario_.policies[0].spec).toHtmlEscaped(),
                           QString::fromStdString(scenario_.policies[1].spec).toHtmlEscaped()));
  chart->legend()->setAlignment(Qt::AlignBottom);
}

void SweepView::draw_heatmap() {
  QChart* chart = heatmap_chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  const int cols = static_cast<int>(grid_.contexts.size());
  const int rows = static_cast<int>(grid_.batches.size());
  auto* x_axis = new QCategoryAxis;
  auto* y_axis = new QCategoryAxis;
  x_axis->setRange(0, cols);
  y_axis->setRange(0, rows);
  x_axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  y_axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  for (int j = 0; j < cols; ++j) x_axis->append(tokens(grid_.contexts[static_cast<size_t>(j)]), j + 1);
  for (int i = 0; i < rows; ++i) y_axis->append(QString::number(grid_.batches[static_cast<size_t>(i)]), i + 1);
  x_axis->setTitleText(tr("context (KV tokens per request)"));
  y_axis->setTitleText(tr("batch"));
  x_axis->setGridLineVisible(false);
  y_axis->setGridLineVisible(false);
  chart->addAxis(x_axis, Qt::AlignBottom);
  chart->addAxis(y_axis, Qt::AlignLeft);

  // Invisible markers at the cell centres carry the tooltips.
  auto* cells = new QScatterSeries;
  cells->setMarkerSize(18);
  cells->setColor(Qt::transparent);
  cells->setBorderColor(Qt::transparent);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) cells->append(j + 0.5, i + 0.5);
  connect(cells, &QScatterSeries::hovered, this, [this](const QPointF& p, bool state) {
    if (!state) return QToolTip::hideText();
    const size_t i = static_cast<size_t>(p.y()), j = static_cast<size_t>(p.x());
    if (i >= grid_.batches.size() || j >= grid_.contexts.size()) return;
    QToolTip::showText(QCursor::pos(), tr("batch %1 x %2 tokens\nA %3, B %4\nB speedup %5x")
                                           .arg(grid_.batches[i])
                                           .arg(grid_.contexts[j])
                                           .arg(format_us(grid_.a(i, j)), format_us(grid_.b(i, j)),
                                                QString::number(grid_.speedup(i, j), 'f', 2)));
  });
  chart->addSeries(cells);
  cells->attachAxis(x_axis);
  cells->attachAxis(y_axis);
  chart->legend()->markers(cells).front()->setVisible(false);

  bool first = true;
  for (const CellEdge& e : crossover_edges(grid_)) {
    auto* edge = new QLineSeries;
    edge->setPen(QPen(Qt::black, 3));
    edge->append(e.x0, e.y0);
    edge->append(e.x1, e.y1);
    edge->setName(tr("crossover (B = A)"));
    chart->addSeries(edge);
    edge->attachAxis(x_axis);
    edge->attachAxis(y_axis);
    if (!first) chart->legend()->markers(edge).front()->setVisible(false);
    first = false;
  }
  chart->setTitle(
      tr("<b>B speedup over A</b> (A time / B time)<br>blue: B faster · red: B slower · white: equal · "
         "full colour at 2x"));
  chart->legend()->setAlignment(Qt::AlignBottom);
  paint_heatmap_background();
}

void SweepView::paint_heatmap_background() {
  QChart* chart = heatmap_chart();
  const QRectF area = chart->plotArea();
  if (grid_.batches.empty() || grid_.contexts.empty() || area.width() < 1 || area.height() < 1) return;
  const int cols = static_cast<int>(grid_.contexts.size());
  const int rows = static_cast<int>(grid_.batches.size());
  QImage cells(cols, rows, QImage::Format_RGB32);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      cells.setPixelColor(j, rows - 1 - i,
                          speedup_color(grid_.speedup(static_cast<size_t>(i), static_cast<size_t>(j))));
  // One pixel per cell, scaled without smoothing so cells keep sharp edges, placed on the plot area.
  QBrush brush(cells.scaled(area.size().toSize(), Qt::IgnoreAspectRatio, Qt::FastTransformation));
  brush.setTransform(QTransform::fromTranslate(area.left(), area.top()));
  chart->setPlotAreaBackgroundBrush(brush);
  chart->setPlotAreaBackgroundPen(Qt::NoPen);
  chart->setPlotAreaBackgroundVisible(true);
}

}  // namespace mlasim::gui
