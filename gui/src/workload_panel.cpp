#include "mlasim/gui/workload_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <initializer_list>
#include <limits>
#include <utility>

#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_lists.h"
#include "mlasim/model/two_scopes.h"
#include "mlasim/sim/evaluation.h"

namespace mlasim::gui {
namespace {

constexpr int kMaxContext = 1 << 30;

QSpinBox* spin(const char* name, int min, int max, int step = 1) {
  auto* s = new QSpinBox;
  s->setObjectName(QString::fromLatin1(name));
  s->setRange(min, max);
  s->setSingleStep(step);
  s->setAccelerated(true);
  return s;
}

QComboBox* combo(const char* name, const QStringList& items) {
  auto* c = new QComboBox;
  c->setObjectName(QString::fromLatin1(name));
  c->addItems(items);
  return c;
}

// Parses "100000, 2000,500" (commas or spaces); throws InputError("kv_lens", ...) naming the bad item.
// Lengths as people paste them: separated by commas, spaces or both.
std::vector<int> parse_lengths(const QString& text) {
  const QStringList items = text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts);
  if (items.empty()) throw InputError("kv_lens", "give at least one KV length, e.g. 100000, 2000, 500");
  std::vector<int> out = parse_int_list(items.join(QLatin1Char(',')).toStdString(), "kv_lens");
  for (int v : out)
    if (v > kMaxContext)
      throw InputError("kv_lens",
                       "must be KV lengths 1.." + std::to_string(kMaxContext) + ", got " + std::to_string(v));
  return out;
}

QString join_lengths(const std::vector<int>& lens) {
  QStringList items;
  for (int v : lens) items << QString::number(v);
  return items.join(QStringLiteral(", "));
}

}  // namespace

WorkloadPanel::WorkloadPanel(QWidget* parent) : QGroupBox(tr("Workload"), parent) {
  auto* form = new QFormLayout(this);
  QStringList gpus;
  for (const auto& name : builtin_gpu_names()) gpus << QString::fromStdString(name);
  gpu_ = combo("gpu", gpus);
  gpu_->setToolTip(tr("GPU profile (data/gpus/*.json)"));
  form->addRow(tr("GPU"), gpu_);

  batch_kind_ = combo("batch_kind", {QStringLiteral("uniform"), QStringLiteral("list"), QStringLiteral("random")});
  batch_kind_->setToolTip(tr("uniform: batch x context; list: one KV length per request; random: drawn with a seed"));
  form->addRow(tr("Batch"), batch_kind_);
  batch_pages_ = new QStackedWidget;

  auto* uniform = new QWidget;
  auto* uniform_form = new QFormLayout(uniform);
  uniform_form->setContentsMargins(0, 0, 0, 0);
  count_ = spin("count", 1, 65536);
  context_ = spin("context", 1, kMaxContext, 1024);
  uniform_form->addRow(tr("requests"), count_);
  uniform_form->addRow(tr("context (tokens)"), context_);
  batch_pages_->addWidget(uniform);

  auto* list = new QWidget;
  auto* list_form = new QFormLayout(list);
  list_form->setContentsMargins(0, 0, 0, 0);
  kv_lens_ = new QLineEdit;
  kv_lens_->setObjectName(QStringLiteral("kv_lens"));
  kv_lens_->setPlaceholderText(QStringLiteral("100000, 2000, 500"));
  list_form->addRow(tr("KV lengths"), kv_lens_);
  batch_pages_->addWidget(list);

  auto* random = new QWidget;
  auto* random_form = new QFormLayout(random);
  random_form->setContentsMargins(0, 0, 0, 0);
  random_count_ = spin("random_count", 1, 65536);
  distribution_ = combo("distribution", {QStringLiteral("uniform"), QStringLiteral("lognormal")});
  min_context_ = spin("min_context", 1, kMaxContext, 1024);
  max_context_ = spin("max_context", 1, kMaxContext, 1024);
  median_context_ = spin("median_context", 1, kMaxContext, 1024);
  sigma_ = new QDoubleSpinBox;
  sigma_->setObjectName(QStringLiteral("sigma"));
  sigma_->setRange(0, 10);
  sigma_->setSingleStep(0.1);
  seed_ = spin("seed", 0, std::numeric_limits<int>::max());
  random_form->addRow(tr("requests"), random_count_);
  random_form->addRow(tr("distribution"), distribution_);
  random_form->addRow(tr("min context"), min_context_);
  random_form->addRow(tr("max context"), max_context_);
  random_form->addRow(tr("median (lognormal)"), median_context_);
  random_form->addRow(tr("sigma (lognormal)"), sigma_);
  random_form->addRow(tr("seed"), seed_);
  batch_pages_->addWidget(random);
  form->addRow(batch_pages_);

  qlen_ = spin("qlen", 1, 1024);
  qlen_->setToolTip(tr("query tokens per request (1 = plain decode, > 1 = MTP / speculative)"));
  heads_ = spin("heads", 8, 1024, 8);
  heads_->setToolTip(tr("q heads (MLA has one kv head)"));
  QStringList dtypes = {QStringLiteral("fp8"), QStringLiteral("bf16")};
  q_dtype_ = combo("q_dtype", dtypes);
  kv_dtype_ = combo("kv_dtype", dtypes);
  QStringList pages;
  for (int p = 1; p <= 1024; p *= 2) pages << QString::number(p);
  page_size_ = combo("page_size", pages);
  clusters_ = spin("clusters", 0, 1024);
  clusters_->setSpecialValueText(tr("all"));
  clusters_->setToolTip(tr("CUs available to the plan (all = the whole GPU)"));
  topk_ = spin("topk", 0, DecodeBatch::kMaxTopk, 256);
  topk_->setSpecialValueText(tr("dense"));
  topk_->setToolTip(
      tr("sparse (DSA) decode: KV rows each query token selects, e.g. 2048 (page size 1); "
         "dense = the whole context"));
  form->addRow(tr("qlen"), qlen_);
  form->addRow(tr("heads"), heads_);
  form->addRow(tr("q dtype"), q_dtype_);
  form->addRow(tr("kv dtype"), kv_dtype_);
  form->addRow(tr("page size"), page_size_);
  form->addRow(tr("clusters"), clusters_);
  form->addRow(tr("top-k"), topk_);
  dsv4_ = combo("dsv4", {tr("off"), QStringLiteral("csa"), QStringLiteral("hca"), QStringLiteral("swa")});
  dsv4_->setToolTip(
      tr("DeepSeek-V4's two scopes per query token: a sliding window plus compressed rows (csa: "
         "1/4, the indexer's top 1024; hca: 1/128, all; swa: the window alone); page size 1"));
  window_ = spin("window", 1, TwoScopes::kMaxWindow);
  window_->setToolTip(tr("two scopes: rows of the sliding window"));
  compress_ratio_ = spin("compress_ratio", 0, TwoScopes::kMaxCompressRatio);
  compress_ratio_->setSpecialValueText(tr("none"));
  compress_ratio_->setToolTip(tr("two scopes: tokens per compressed row (none = a sliding-window-only layer)"));
  extra_topk_ = spin("extra_topk", 0, DecodeBatch::kMaxTopk, 128);
  extra_topk_->setSpecialValueText(tr("all"));
  extra_topk_->setToolTip(tr("two scopes: compressed rows the indexer selects (all = every committed one)"));
  scope_run_ = combo("scope_run", {QStringLiteral("one-pass"), QStringLiteral("merged")});
  scope_run_->setToolTip(
      tr("one-pass: both scopes in one index list per token; merged: a stream per scope, each "
         "split on its own, then an LSE merge of each token's streams (grey on the timeline)"));
  form->addRow(tr("DSv4 scopes"), dsv4_);
  form->addRow(tr("window"), window_);
  form->addRow(tr("compress ratio"), compress_ratio_);
  form->addRow(tr("extra top-k"), extra_topk_);
  form->addRow(tr("scope run"), scope_run_);

  set_workload(sim::Workload{});

  connect(batch_kind_, &QComboBox::currentIndexChanged, this, &WorkloadPanel::show_batch_page);
  connect(gpu_, &QComboBox::currentIndexChanged, this, [this] {
    update_cluster_range();
    emit_changed();
  });
  connect(dsv4_, &QComboBox::currentIndexChanged, this, &WorkloadPanel::apply_dsv4_preset);
  for (QComboBox* c : {batch_kind_, distribution_, q_dtype_, kv_dtype_, page_size_, scope_run_})
    connect(c, &QComboBox::currentIndexChanged, this, &WorkloadPanel::emit_changed);
  for (QSpinBox* s : {count_, context_, random_count_, min_context_, max_context_, median_context_, seed_, qlen_,
                      heads_, clusters_, topk_, window_, compress_ratio_, extra_topk_})
    connect(s, &QSpinBox::valueChanged, this, &WorkloadPanel::emit_changed);
  connect(sigma_, &QDoubleSpinBox::valueChanged, this, &WorkloadPanel::emit_changed);
  connect(kv_lens_, &QLineEdit::textChanged, this, &WorkloadPanel::emit_changed);
}

// Picking a layer kind fills its preset (the fields stay editable); off leaves them as they are, unused.
void WorkloadPanel::apply_dsv4_preset(int index) {
  const bool on = index > 0;
  for (QWidget* w : std::initializer_list<QWidget*>{window_, compress_ratio_, extra_topk_, scope_run_})
    w->setEnabled(on);
  if (on && !loading_) {
    const TwoScopes preset = TwoScopes::preset(dsv4_->currentText().toStdString());
    const bool was_loading = std::exchange(loading_, true);
    window_->setValue(preset.window);
    compress_ratio_->setValue(preset.compress_ratio);
    extra_topk_->setValue(preset.extra_topk);
    loading_ = was_loading;
  }
  emit_changed();
}

void WorkloadPanel::show_batch_page(int index) {
  // Only the shown page counts for the size, so the uniform form is not as tall as the random one.
  for (int i = 0; i < batch_pages_->count(); ++i)
    batch_pages_->widget(i)->setSizePolicy(QSizePolicy::Preferred,
                                           i == index ? QSizePolicy::Preferred : QSizePolicy::Ignored);
  batch_pages_->setCurrentIndex(index);
  batch_pages_->adjustSize();
}

void WorkloadPanel::emit_changed() {
  if (!loading_) emit workloadChanged();
}

void WorkloadPanel::update_cluster_range() {
  try {
    clusters_->setMaximum(sim::gpu_profile(gpu_->currentText().toStdString())->num_cu);
  } catch (const InputError&) {
    clusters_->setMaximum(1024);  // the profile is reported when the workload is planned
  }
}

sim::Workload WorkloadPanel::workload() const {
  // Fields the panel does not show (per-request query and top-k lengths, kv heads, granularity, causal) keep the
  // values of
  // the workload last set, so a scenario opened and saved again loses nothing.
  sim::Workload w = shown_;
  w.batch = sim::BatchSpec{};
  w.gpu = gpu_->currentText().toStdString();
  // Only the fields of the chosen kind are read; the others keep their defaults, as in a scenario file.
  sim::BatchSpec& b = w.batch;
  b.kind = static_cast<sim::BatchSpec::Kind>(batch_kind_->currentIndex());
  switch (b.kind) {
    case sim::BatchSpec::Kind::uniform:
      b.count = count_->value();
      b.context = context_->value();
      break;
    case sim::BatchSpec::Kind::list: b.kv_lens = parse_lengths(kv_lens_->text()); break;
    case sim::BatchSpec::Kind::random:
      b.count = random_count_->value();
      b.distribution = static_cast<sim::BatchSpec::Distribution>(distribution_->currentIndex());
      b.min_context = min_context_->value();
      b.max_context = max_context_->value();
      if (b.distribution == sim::BatchSpec::Distribution::lognormal) {
        b.median_context = median_context_->value();
        b.sigma = sigma_->value();
      }
      b.seed = static_cast<uint64_t>(seed_->value());
      if (b.max_context < b.min_context)
        throw InputError("max_context", "must be >= min context (" + std::to_string(b.min_context) + "), got " +
                                            std::to_string(b.max_context));
      break;
  }
  w.qlen = qlen_->value();
  // Per-request query lengths hold only while the batch and the query length they were given with stay.
  if (w.qlen != shown_.qlen || w.batch.size() != shown_.batch.size()) w.qo_lens.clear();
  w.heads = heads_->value();
  w.q_dtype = parse_dtype(q_dtype_->currentText().toStdString(), "q_dtype");
  w.kv_dtype = parse_dtype(kv_dtype_->currentText().toStdString(), "kv_dtype");
  w.page_size = page_size_->currentText().toInt();
  w.clusters = clusters_->value();
  w.topk = topk_->value();
  // Per-request top-k lengths (scenario files) hold only while the batch and the top-k they were given with stay.
  if (w.topk != shown_.topk || w.batch.size() != shown_.batch.size()) w.topk_lens.clear();
  w.scopes = {};
  if (dsv4_->currentIndex() > 0)
    w.scopes = {window_->value(), compress_ratio_->value(), extra_topk_->value(),
                parse_scope_run(scope_run_->currentText().toStdString(), "scope_run")};
  return w;
}

void WorkloadPanel::set_workload(const sim::Workload& w) {
  loading_ = true;
  shown_ = w;
  const QString gpu = QString::fromStdString(w.gpu);
  if (gpu_->findText(gpu) < 0) gpu_->addItem(gpu);  // a profile given by path
  gpu_->setCurrentText(gpu);
  update_cluster_range();
  const sim::BatchSpec& b = w.batch;
  batch_kind_->setCurrentIndex(static_cast<int>(b.kind));
  show_batch_page(static_cast<int>(b.kind));
  count_->setValue(b.kind == sim::BatchSpec::Kind::uniform ? b.count : count_->value());
  context_->setValue(b.context);
  kv_lens_->setText(b.kind == sim::BatchSpec::Kind::list ? join_lengths(b.kv_lens) : kv_lens_->text());
  random_count_->setValue(b.kind == sim::BatchSpec::Kind::random ? b.count : random_count_->value());
  distribution_->setCurrentIndex(static_cast<int>(b.distribution));
  min_context_->setValue(b.min_context);
  max_context_->setValue(b.max_context);
  median_context_->setValue(b.median_context);
  sigma_->setValue(b.sigma);
  seed_->setValue(static_cast<int>(std::min<uint64_t>(b.seed, std::numeric_limits<int>::max())));
  qlen_->setValue(w.qlen);
  heads_->setValue(w.heads);
  q_dtype_->setCurrentText(QString::fromStdString(std::string(dtype_name(w.q_dtype))));
  kv_dtype_->setCurrentText(QString::fromStdString(std::string(dtype_name(w.kv_dtype))));
  if (page_size_->findText(QString::number(w.page_size)) < 0) page_size_->addItem(QString::number(w.page_size));
  page_size_->setCurrentText(QString::number(w.page_size));
  clusters_->setValue(w.clusters);
  topk_->setValue(w.topk);
  // A workload's scopes show as the layer kind whose preset they are, else as csa's row with their own values.
  int kind = 0;
  for (int i = 1; i < dsv4_->count() && w.scopes.on() && kind == 0; ++i) {
    TwoScopes preset = TwoScopes::preset(dsv4_->itemText(i).toStdString());
    preset.run = w.scopes.run;
    if (preset == w.scopes) kind = i;
  }
  dsv4_->setCurrentIndex(w.scopes.on() && kind == 0 ? 1 : kind);
  apply_dsv4_preset(dsv4_->currentIndex());
  if (w.scopes.on()) {
    window_->setValue(w.scopes.window);
    compress_ratio_->setValue(w.scopes.compress_ratio);
    extra_topk_->setValue(w.scopes.extra_topk);
    scope_run_->setCurrentIndex(w.scopes.run == TwoScopes::Run::merged ? 1 : 0);
  }
  loading_ = false;
}

}  // namespace mlasim::gui
