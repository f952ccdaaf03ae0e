#pragma once
// The workload form: GPU, the batch (uniform, a list of lengths, or a seeded random distribution), qlen, heads,
// dtypes, page size, the clusters available and the top-k of sparse decode. Every edit emits workloadChanged.
#include <QGroupBox>

#include "mlasim/sim/scenario.h"

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;
class QStackedWidget;

namespace mlasim::gui {

class WorkloadPanel : public QGroupBox {
  Q_OBJECT

 public:
  explicit WorkloadPanel(QWidget* parent = nullptr);

  // The form's workload; throws InputError("kv_lens", ...) when the length list does not parse.
  sim::Workload workload() const;
  // Shows `w` without emitting workloadChanged.
  void set_workload(const sim::Workload& w);

  // The editors, for keyboard-free use (tests, scripted demos). Object names match the scenario keys.
  QComboBox* gpu_box() const { return gpu_; }
  QComboBox* batch_kind_box() const { return batch_kind_; }
  QSpinBox* count_box() const { return count_; }
  QSpinBox* context_box() const { return context_; }
  QLineEdit* kv_lens_edit() const { return kv_lens_; }
  QSpinBox* heads_box() const { return heads_; }
  QSpinBox* qlen_box() const { return qlen_; }
  QSpinBox* clusters_box() const { return clusters_; }
  QSpinBox* topk_box() const { return topk_; }
  QComboBox* dsv4_box() const { return dsv4_; }
  QComboBox* scope_run_box() const { return scope_run_; }

 signals:
  void workloadChanged();

 private:
  void emit_changed();
  void update_cluster_range();
  void show_batch_page(int index);
  void apply_dsv4_preset(int index);

  QComboBox* gpu_;
  QComboBox* batch_kind_;
  QStackedWidget* batch_pages_;
  QSpinBox* count_;
  QSpinBox* context_;
  QLineEdit* kv_lens_;
  QSpinBox* random_count_;
  QComboBox* distribution_;
  QSpinBox* min_context_;
  QSpinBox* max_context_;
  QSpinBox* median_context_;
  QDoubleSpinBox* sigma_;
  QSpinBox* seed_;
  QSpinBox* qlen_;
  QSpinBox* heads_;
  QComboBox* q_dtype_;
  QComboBox* kv_dtype_;
  QComboBox* page_size_;
  QSpinBox* clusters_;
  QSpinBox* topk_;
  QComboBox* dsv4_;  // off, then DeepSeek-V4's layer kinds (their presets fill the three fields below)
  QSpinBox* window_;
  QSpinBox* compress_ratio_;
  QSpinBox* extra_topk_;
  QComboBox* scope_run_;
  sim::Workload shown_;  // the workload last set: the source of the fields the panel does not show
  bool loading_ = false;
};

}  // namespace mlasim::gui
