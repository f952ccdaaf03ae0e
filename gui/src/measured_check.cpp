#include "mlasim/gui/measured_check.h"

#include "mlasim/model/json_fields.h"
#include "mlasim/validate/gzip_file.h"

namespace mlasim::gui {

MeasuredCheck check_timeline_json(const nlohmann::json& j, const std::string& path) {
  return parse_file_json(j, path, "timeline", [&path](const nlohmann::json& doc) -> MeasuredCheck {
    auto timeline = std::make_shared<validate::MeasuredTimeline>(validate::measured_timeline_from_json(doc));
    auto check = std::make_shared<const validate::TimelineCheck>(validate::check_measured_timeline(*timeline));
    validate::attach_plan_facts(*timeline, *check->evaluation.plan);
    return {path, std::move(timeline), std::move(check)};
  });
}

MeasuredCheck check_timeline_file(const std::string& path) {
  return check_timeline_json(validate::read_json_maybe_gzip(path, "timeline"), path);
}

}  // namespace mlasim::gui
