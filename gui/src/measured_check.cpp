#include "mlasim/gui/measured_check.h"

#include "mlasim/model/input_error.h"
#include "mlasim/validate/gzip_file.h"

namespace mlasim::gui {

MeasuredCheck check_timeline_json(const nlohmann::json& j, const std::string& path) {
  try {
    auto timeline = std::make_shared<validate::MeasuredTimeline>(validate::measured_timeline_from_json(j));
    auto check = std::make_shared<const validate::TimelineCheck>(validate::check_measured_timeline(*timeline));
    validate::attach_plan_facts(*timeline, *check->evaluation.plan);
    return {path, std::move(timeline), std::move(check)};
  } catch (const InputError& e) {
    throw InputError("timeline", path + ": " + e.what());
  }
}

MeasuredCheck check_timeline_file(const std::string& path) {
  return check_timeline_json(validate::read_json_maybe_gzip(path, "timeline"), path);
}

}  // namespace mlasim::gui
