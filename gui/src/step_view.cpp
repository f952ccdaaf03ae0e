#include "mlasim/gui/step_view.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>

#include "mlasim/gui/step_picture.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/validate/kernel_trace.h"
#include "mlasim/validate/step_rules.h"

namespace mlasim::gui {

StepView::StepView(QWidget* parent) : QWidget(parent) {
  auto* open = new QPushButton(tr("Open trace..."));
  trace_label_ = new QLabel(tr("No trace: open a torch.profiler or rocprofv3 kernel trace of decode steps."));
  edits_ = new QLineEdit;
  edits_->setPlaceholderText(
      tr("edits, as mlasim step --edit takes them: policy=fixed:splits=4 "
         "fuse=q_prep:bytes=18743296 remove=copy gaps=0 metadata=device-serial"));
  auto* apply = new QPushButton(tr("Apply"));
  auto* open_bytes = new QPushButton(tr("Op bytes..."));
  open_bytes->setToolTip(
      tr("the bytes each kernel reads and writes (mlasim step --op-bytes): fuse and remove edits "
         "then weigh what they change in L2 for the attention after them"));
  op_bytes_label_ = new QLabel(tr("op bytes: none"));
  auto* open_batches = new QPushButton(tr("Step batches..."));
  open_batches->setToolTip(
      tr("each step's batch as the server logged it (mlasim step --step-batches): policy and metadata edits plan it "
         "in place of the workload's contexts"));
  step_batches_label_ = new QLabel(tr("step batches: none"));
  auto* clear_batches = new QPushButton(tr("Clear"));
  clear_batches->setToolTip(tr("plan the workload's batch again in every step"));
  summary_label_ = new QLabel;
  summary_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_label_->setWordWrap(true);  // the edits' lines and the band's basis run long; the window keeps its width
  error_label_ = new QLabel;
  error_label_->setWordWrap(true);
  error_label_->setStyleSheet(QStringLiteral("color: #8a1111;"));
  error_label_->hide();
  picture_label_ = new QLabel;
  picture_label_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  scroll_ = new QScrollArea;
  scroll_->setWidget(picture_label_);
  scroll_->setWidgetResizable(true);

  auto* top = new QHBoxLayout;
  top->addWidget(open);
  top->addWidget(trace_label_, 1);
  auto* edit_row = new QHBoxLayout;
  edit_row->addWidget(new QLabel(tr("Edits")));
  edit_row->addWidget(edits_, 1);
  edit_row->addWidget(apply);
  edit_row->addWidget(open_bytes);
  edit_row->addWidget(op_bytes_label_);
  edit_row->addWidget(open_batches);
  edit_row->addWidget(step_batches_label_);
  edit_row->addWidget(clear_batches);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addLayout(edit_row);
  layout->addWidget(error_label_);
  layout->addWidget(summary_label_);
  layout->addWidget(scroll_, 1);

  connect(open, &QPushButton::clicked, this, &StepView::openRequested);
  connect(apply, &QPushButton::clicked, this, [this] { set_edits(edits_->text()); });
  connect(open_bytes, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open op bytes"), QString(), tr("Op bytes (*.json);;All files (*)"));
    if (!path.isEmpty()) set_op_bytes(path);
  });
  connect(open_batches, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open step batches"), QString(),
                                                      tr("Step batches (*.json);;All files (*)"));
    if (!path.isEmpty()) set_step_batches(path);
  });
  connect(clear_batches, &QPushButton::clicked, this, [this] { set_step_batches(QString()); });
  connect(edits_, &QLineEdit::returnPressed, this, [this] { set_edits(edits_->text()); });
}

bool StepView::open_trace(const QString& path, const QString& rules) {
  try {
    const validate::StepRules r = validate::load_step_rules(rules.toStdString());
    validate::StepAnalysis a =
        validate::analyse_steps(validate::read_kernel_trace(path.toStdString()), r, validate::StepOptions{});
    // Step batches chosen for the trace that was open are that trace's; ones chosen before any trace wait for this one.
    if (analysis_) {
      step_batches_path_.clear();
      step_batches_text_.reset();
      step_batches_label_->setText(tr("step batches: none"));
    }
    analysis_ = std::move(a);
  } catch (const InputError& e) {
    return show_error(e);
  }
  QString label = tr("%1: %2 steps (%3), %4 kernels, rules %5")
                      .arg(QFileInfo(path).fileName())
                      .arg(analysis_->steps.size())
                      .arg(QString::fromStdString(analysis_->split))
                      .arg(analysis_->kernels)
                      .arg(QString::fromStdString(analysis_->rules));
  // A step whose batch the trace gives runs at it; the workload panel gives the rest (docs/step.md §2).
  if (!analysis_->batch_source.empty())
    label += tr("; batch from %1 in %2 of %3 steps, else the workload's")
                 .arg(QString::fromStdString(analysis_->batch_source))
                 .arg(analysis_->steps_with_batch)
                 .arg(analysis_->steps.size());
  trace_label_->setText(label);
  return update();
}

bool StepView::show_error(const InputError& e) {
  last_error_ = QString::fromStdString(e.what());
  error_label_->setText(last_error_);
  error_label_->show();
  return false;
}

void StepView::set_workload(std::shared_ptr<const sim::WorkloadContext> workload, const std::string& ran_policy) {
  workload_ = std::move(workload);
  ran_policy_ = ran_policy;
  // Every edit of the explorer's forms comes here: the step is predicted again when the tab is seen, not on each.
  stale_ = analysis_.has_value();
  if (stale_ && isVisible()) update();
}

void StepView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) update();
}

bool StepView::set_edits(const QString& edits) {
  std::vector<validate::StepEdit> parsed;
  try {
    for (const QString& e : edits.split(QLatin1Char(' '), Qt::SkipEmptyParts))
      parsed.push_back(validate::parse_step_edit(e.toStdString()));
  } catch (const InputError& e) {
    return show_error(e);
  }
  if (edits_->text() != edits) edits_->setText(edits);
  std::swap(edits_parsed_, parsed);
  if (update()) return true;
  std::swap(edits_parsed_, parsed);  // the edits that failed are not kept
  return false;
}

bool StepView::set_op_bytes(const QString& path) {
  std::optional<validate::OpBytesRules> read;
  try {
    if (!path.isEmpty()) read = validate::load_op_bytes(path.toStdString());
  } catch (const InputError& e) {
    return show_error(e);
  }
  std::swap(op_bytes_, read);
  if (!update()) {
    std::swap(op_bytes_, read);
    return false;
  }
  op_bytes_label_->setText(path.isEmpty() ? tr("op bytes: none") : tr("op bytes: %1").arg(QFileInfo(path).fileName()));
  return true;
}

bool StepView::set_step_batches(const QString& path) {
  std::optional<std::string> text;
  try {
    if (!path.isEmpty()) {
      text = read_text_file(path.toStdString(), "step-batches");
      // With no trace open update() reads nothing: read it here, so a bad file is named at once (against the
      // workload's shape or, before there is one, a plain dense batch).
      if (!analysis_)
        validate::step_batches_from_json(*text, path.toStdString(),
                                         workload_ ? workload_->batch : DecodeBatch::uniform(1, 1));
    }
  } catch (const InputError& e) {
    return show_error(e);
  }
  QString kept_path = path;
  std::swap(step_batches_path_, kept_path);
  std::swap(step_batches_text_, text);
  if (!update()) {
    std::swap(step_batches_path_, kept_path);
    std::swap(step_batches_text_, text);
    return false;
  }
  step_batches_label_->setText(path.isEmpty() ? tr("step batches: none")
                                              : tr("step batches: %1").arg(QFileInfo(path).fileName()));
  return true;
}

bool StepView::update() {
  if (!analysis_) return true;
  try {
    if (!metadata_cost_) metadata_cost_ = sim::load_metadata_cost();
    // The file read against the workload as it is now: its entries keep the workload's heads and dtypes.
    std::optional<validate::StepBatches> batches;
    if (step_batches_text_) {
      if (!workload_) throw InputError("step-batches", "needs the step's workload");
      batches = validate::step_batches_from_json(*step_batches_text_, step_batches_path_.toStdString(),
                                                 workload_->batch, analysis_->total_steps);
    }
    validate::StepWhatIf w =
        validate::apply_step_edits(*analysis_, edits_parsed_,
                                   {workload_.get(), ran_policy_, &*metadata_cost_, op_bytes_ ? &*op_bytes_ : nullptr,
                                    batches ? &*batches : nullptr});
    what_if_ = std::move(w);
  } catch (const InputError& e) {
    return show_error(e);
  }
  stale_ = false;
  last_error_.clear();
  error_label_->hide();
  draw();
  summary_label_->setText(summary());
  return true;
}

void StepView::draw() {
  if (!what_if_) return;
  const QString title =
      what_if_->notes.empty()
          ? tr("Step %1 as measured").arg(what_if_->before.front().index)
          : tr("Step %1: measured and edited (%2)").arg(what_if_->before.front().index).arg(edits_->text());
  picture_ = step_picture(*what_if_, 0, title, QSize(std::max(900, scroll_->viewport()->width() - 4), 360));
  picture_label_->setPixmap(QPixmap::fromImage(picture_));
}

void StepView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  draw();
}

QString StepView::summary() const {
  if (!what_if_) return {};
  const validate::StepSummary& b = what_if_->before_summary;
  const validate::StepSummary& a = what_if_->after_summary;
  QString s = tr("mean step: measured %1 us, edited %2 us: %3x (%4 % tokens/s); attention share %5 % -> %6 %")
                  .arg(b.time_us, 0, 'f', 1)
                  .arg(a.time_us, 0, 'f', 1)
                  .arg(what_if_->speedup(), 0, 'f', 3)
                  .arg((what_if_->speedup() - 1) * 100, 0, 'f', 1)
                  .arg(b.attention_share() * 100, 0, 'f', 1)
                  .arg(a.attention_share() * 100, 0, 'f', 1);
  // The edits' 90 % band (the policy edits' ratio error, the fuse and remove edits' measured error), or why there is
  // none.
  QStringList unbanded;
  for (const std::string& e : what_if_->unbanded_edits) unbanded << QString::fromStdString(e);
  if (const auto band = what_if_->band_range())
    s += tr("\n90 % band of the edited step: %1 .. %2 us (%3)")
             .arg(band->first, 0, 'f', 1)
             .arg(band->second, 0, 'f', 1)
             .arg(QString::fromStdString(what_if_->band_basis)) +
         (unbanded.isEmpty() ? QString() : tr("; not in it: %1").arg(unbanded.join(QStringLiteral(", "))));
  else if (!what_if_->band_basis.empty())
    s += tr("\nno band: %1").arg(QString::fromStdString(what_if_->band_basis));
  // How precisely the trace measures its step, and whether traces as long confirm the predicted change to +-5 %.
  if (const std::string spread = validate::spread_text(what_if_->measured_spread, b.time_us); !spread.empty())
    s += tr("\nspread: %1").arg(QString::fromStdString(spread));
  if (!what_if_->notes.empty())
    if (const std::string c = validate::confirm_text(what_if_->measured_spread, a.time_us - b.time_us); !c.empty())
      s += tr("\nconfirm: %1").arg(QString::fromStdString(c));
  for (const std::string& n : what_if_->notes) s += QStringLiteral("\n") + QString::fromStdString(n);
  return s;
}

}  // namespace mlasim::gui
