#pragma once
// The decode-step what-if drawn (docs/step.md): one step's kernels as they ran and as the edits leave them, two
// lanes on one time axis, each kernel a box coloured by its class, the launch gaps left blank, so a fused run, a
// removed copy or a shorter attention shows where it happens in the step.
#include <QColor>
#include <QImage>
#include <QString>

#include "mlasim/validate/step_what_if.h"

namespace mlasim::gui {

// The colour of a step class (validate::step_classes()); grey for another name.
QColor step_class_color(const std::string& kernel_class);

// The colour of the policy edits' 90 % band (StepWhatIf::band_us), drawn as a whisker at the edited step's end.
QColor step_band_color();

// Step `step` (an index into w.before / w.after) of the what-if, measured above edited, with a legend of the
// classes and each lane's time, and the policy edits' band on the edited lane where there is one; `title` above. An
// empty what-if draws the title and a note.
QImage step_picture(const validate::StepWhatIf& w, size_t step, const QString& title, QSize size = {1400, 360});

}  // namespace mlasim::gui
