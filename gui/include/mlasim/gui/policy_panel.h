#pragma once
// The form of one side's split policy: the policies of sim::policy_registry() and, for the chosen one, an
// editor per knob built from its KnobInfo table (nothing here names a policy or a knob).
#include <QGroupBox>
#include <string>
#include <vector>

#include "mlasim/sim/split_policy.h"

class QComboBox;
class QFormLayout;
class QLabel;

namespace mlasim::gui {

class PolicyPanel : public QGroupBox {
  Q_OBJECT

 public:
  explicit PolicyPanel(const QString& title, QWidget* parent = nullptr);

  // The canonical spec of the form ("NAME:k=v,..."); knobs left at their default are omitted.
  std::string spec() const;
  // Shows `spec`. Throws InputError (unknown policy or knob, bad value) and then leaves the form as it was.
  void set_spec(const std::string& spec);

  // A line under the policy, e.g. that an imported plan is shown instead of the policy's.
  void set_note(const QString& note);

  QComboBox* policy_box() const { return policy_; }
  // The editor of knob `name` of the current policy (QSpinBox, QDoubleSpinBox or QComboBox), or nullptr.
  QWidget* knob_editor(const std::string& name) const;
  // Sets a knob's editor from text, as a user would type it; emits specChanged.
  void set_knob_text(const std::string& name, const QString& text);

 signals:
  void specChanged();

 private:
  struct Knob {
    sim::KnobInfo info;
    QWidget* editor;
  };
  void build_knobs(const sim::PolicyInfo& policy);
  void emit_changed();

  QComboBox* policy_;
  QLabel* doc_;
  QLabel* note_;
  QWidget* knob_area_;
  QFormLayout* knob_form_;
  std::vector<Knob> knobs_;
  bool loading_ = false;
};

}  // namespace mlasim::gui
