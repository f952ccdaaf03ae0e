#pragma once
// The Step tab: a measured kernel trace of decode steps (mlasim step, docs/step.md) and the edits typed above it,
// drawn as the step that ran and the step the edits make (step_picture.h), with the per-step figures. The step's
// batch is the explorer's workload and the policy that ran is policy A, so a policy edit is the A/B question the
// Timeline tab asks, put into a whole decode step.
#include <QImage>
#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "mlasim/sim/metadata_cost.h"
#include "mlasim/validate/op_bytes.h"
#include "mlasim/validate/step_analysis.h"
#include "mlasim/validate/step_batches.h"
#include "mlasim/validate/step_what_if.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;

namespace mlasim::gui {

class StepView : public QWidget {
  Q_OBJECT

 public:
  explicit StepView(QWidget* parent = nullptr);

  // Reads and cuts a trace with the mlasim-torch rules, or the rule set named (InputError names what is wrong:
  // the view keeps what it showed and returns false, last_error() says why).
  bool open_trace(const QString& path, const QString& rules = QStringLiteral("mlasim-torch"));
  // The step's workload and the policy that ran the traced MLA kernels (the explorer's workload and policy A). A
  // hidden view predicts the step again when it is shown.
  void set_workload(std::shared_ptr<const sim::WorkloadContext> workload, const std::string& ran_policy);
  // Edits as `mlasim step --edit` takes them, separated by spaces; false (the last good picture kept) when one does
  // not parse or apply.
  bool set_edits(const QString& edits);
  // The bytes each kernel reads and writes (mlasim step --op-bytes; empty: none), with which fuse and remove edits
  // weigh what they change in L2 for the attention after them; false (the last ones kept) when the file is bad.
  bool set_op_bytes(const QString& path);
  // Each step's own batch (mlasim step --step-batches; empty: none), read against the workload's shape each time the
  // step is predicted; false (the last ones kept) when the file is bad or does not fit the trace. A file belongs to
  // its trace: opening another trace drops it.
  bool set_step_batches(const QString& path);

  const std::optional<validate::StepWhatIf>& what_if() const { return what_if_; }
  const QImage& picture() const { return picture_; }
  const QString& last_error() const { return last_error_; }
  QString summary() const;

 signals:
  void openRequested();

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  bool update();
  bool show_error(const InputError& e);  // shows the error above the last good step; false
  void draw();                           // the picture of what_if_, as wide as the view

  QLineEdit* edits_;
  QLabel* trace_label_;
  QLabel* op_bytes_label_;
  QLabel* step_batches_label_;
  QLabel* summary_label_;
  QLabel* error_label_;
  QLabel* picture_label_;
  QScrollArea* scroll_;
  std::optional<validate::StepAnalysis> analysis_;
  std::shared_ptr<const sim::WorkloadContext> workload_;
  std::string ran_policy_ = "aiter-v1";
  std::optional<sim::MetadataCostModel> metadata_cost_;
  std::vector<validate::StepEdit> edits_parsed_;
  std::optional<validate::OpBytesRules> op_bytes_;
  QString step_batches_path_;  // the file, and its text (none: no file)
  std::optional<std::string> step_batches_text_;
  std::optional<validate::StepWhatIf> what_if_;
  QImage picture_;
  QString last_error_;
  bool stale_ = false;  // the workload changed while the view was hidden
};

}  // namespace mlasim::gui
