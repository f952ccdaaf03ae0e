#include "mlasim/gui/policy_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/policy_spec.h"

namespace mlasim::gui {
namespace {

QString text_of(const std::string& s) { return QString::fromStdString(s); }

// The editor suits the knob's domain: a spin box for one numeric range, a list for a domain whose values can all
// be listed (words, single numbers), and an editable list for numbers that also take words ("vllm", "auto").
QWidget* make_editor(const sim::KnobInfo& k) {
  using Kind = sim::KnobDomain::Alternative::Kind;
  const sim::KnobDomain::Alternative* range = k.domain.sole_range();
  bool numeric = false;
  const double default_number = text_of(k.default_value).toDouble(&numeric);
  if (range && numeric && range->kind == Kind::integers) {
    auto* s = new QSpinBox;
    s->setRange(static_cast<int>(range->min), static_cast<int>(range->max));
    s->setValue(static_cast<int>(default_number));
    return s;
  }
  if (range && numeric && range->kind == Kind::reals) {
    auto* s = new QDoubleSpinBox;
    s->setDecimals(3);
    s->setRange(range->min, range->max);
    s->setSingleStep(std::pow(10.0, std::floor(std::log10(std::max(std::abs(default_number), 1e-3)))) / 10);
    s->setValue(default_number);
    return s;
  }
  auto* c = new QComboBox;
  QStringList items;
  if (!k.domain.is_finite()) {
    c->setEditable(true);
    items << text_of(k.default_value);
  }
  for (const auto& a : k.domain.alternatives()) {
    if (a.kind == Kind::word) {
      items << text_of(a.word);
    } else {
      items << text_of(sim::format_knob_number(a.min));
      if (a.max != a.min) items << text_of(sim::format_knob_number(a.max));
    }
  }
  items.removeDuplicates();
  c->addItems(items);
  c->setCurrentText(text_of(k.default_value));
  return c;
}

QString editor_text(const QWidget* editor) {
  if (auto* s = qobject_cast<const QSpinBox*>(editor)) return QString::number(s->value());
  if (auto* s = qobject_cast<const QDoubleSpinBox*>(editor)) return QString::number(s->value(), 'g', 12);
  return qobject_cast<const QComboBox*>(editor)->currentText().trimmed();
}

void set_editor_text(QWidget* editor, const QString& text) {
  if (auto* s = qobject_cast<QSpinBox*>(editor)) return s->setValue(text.toInt());
  if (auto* s = qobject_cast<QDoubleSpinBox*>(editor)) return s->setValue(text.toDouble());
  auto* c = qobject_cast<QComboBox*>(editor);
  if (c->isEditable() || c->findText(text) >= 0) c->setCurrentText(text);
}

// Whether `value` stands for the knob's default (then the spec leaves the knob out): "16" and "016", "1.2" and
// "1.20" are the same value of the domain.
bool is_default(const sim::KnobInfo& k, const QString& value) {
  if (value.isEmpty()) return true;
  const auto v = k.domain.parse(value.toStdString());
  return v && v == k.domain.parse(k.default_value);
}

}  // namespace

PolicyPanel::PolicyPanel(const QString& title, QWidget* parent) : QGroupBox(title, parent) {
  auto* layout = new QVBoxLayout(this);
  policy_ = new QComboBox;
  policy_->setObjectName(QStringLiteral("policy"));
  for (const auto& p : sim::policy_registry()) policy_->addItem(text_of(p.name));
  doc_ = new QLabel;
  doc_->setWordWrap(true);
  doc_->setStyleSheet(QStringLiteral("color: palette(mid);"));
  note_ = new QLabel;
  note_->setWordWrap(true);
  note_->setStyleSheet(QStringLiteral("color: #a05a00;"));
  note_->hide();
  knob_area_ = new QWidget;
  knob_form_ = new QFormLayout(knob_area_);
  knob_form_->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(policy_);
  layout->addWidget(doc_);
  layout->addWidget(note_);
  layout->addWidget(knob_area_);
  build_knobs(sim::policy_registry().front());
  connect(policy_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (loading_ || index < 0) return;
    build_knobs(sim::policy_registry()[static_cast<size_t>(index)]);
    emit_changed();
  });
}

void PolicyPanel::build_knobs(const sim::PolicyInfo& policy) {
  while (knob_form_->rowCount() > 0) knob_form_->removeRow(0);
  knobs_.clear();
  doc_->setText(text_of(policy.doc));
  for (const auto& info : policy.knobs) {
    QWidget* editor = make_editor(info);
    editor->setObjectName(text_of(info.name));
    editor->setToolTip(text_of(info.doc));
    if (auto* s = qobject_cast<QSpinBox*>(editor))
      connect(s, &QSpinBox::valueChanged, this, &PolicyPanel::emit_changed);
    else if (auto* d = qobject_cast<QDoubleSpinBox*>(editor))
      connect(d, &QDoubleSpinBox::valueChanged, this, &PolicyPanel::emit_changed);
    else
      connect(qobject_cast<QComboBox*>(editor), &QComboBox::currentTextChanged, this, &PolicyPanel::emit_changed);
    auto* label = new QLabel(text_of(info.name));
    label->setToolTip(text_of(info.doc));
    knob_form_->addRow(label, editor);
    knobs_.push_back({info, editor});
  }
}

void PolicyPanel::emit_changed() {
  if (!loading_) emit specChanged();
}

std::string PolicyPanel::spec() const {
  sim::PolicySpec spec;
  spec.name = policy_->currentText().toStdString();
  for (const auto& k : knobs_) {
    const QString value = editor_text(k.editor);
    if (!is_default(k.info, value)) spec.knobs[k.info.name] = value.toStdString();
  }
  return spec.to_string();
}

void PolicyPanel::set_spec(const std::string& text) {
  const sim::PolicySpec spec = sim::parse_policy_spec(text);
  sim::make_policy(spec);  // validates the name, every knob and value before the form changes
  const sim::PolicyInfo* policy = sim::find_policy(spec.name);
  loading_ = true;
  policy_->setCurrentText(text_of(policy->name));
  build_knobs(*policy);
  for (const auto& k : knobs_) {
    const auto it = spec.knobs.find(k.info.name);
    set_editor_text(k.editor, text_of(it != spec.knobs.end() ? it->second : k.info.default_value));
  }
  loading_ = false;
}

void PolicyPanel::set_note(const QString& note) {
  note_->setText(note);
  note_->setVisible(!note.isEmpty());
}

QWidget* PolicyPanel::knob_editor(const std::string& name) const {
  for (const auto& k : knobs_)
    if (k.info.name == name) return k.editor;
  return nullptr;
}

void PolicyPanel::set_knob_text(const std::string& name, const QString& text) {
  if (QWidget* editor = knob_editor(name)) set_editor_text(editor, text);
}

}  // namespace mlasim::gui
