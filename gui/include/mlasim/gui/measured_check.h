#pragma once
// A measured timeline file as the explorer shows it: read (validate::measured_timeline_from_json), its workload
// planned again with its policy and simulated as the kernel that ran (validate::check_measured_timeline), and the
// plan's request, KV range and partial flag put on each measured work, so the boxes agree with the plan drawn
// below them.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "mlasim/validate/measured_timeline.h"
#include "mlasim/validate/timeline_comparison.h"

namespace mlasim::gui {

struct MeasuredCheck {
  std::string path;
  std::shared_ptr<const validate::MeasuredTimeline> timeline;
  std::shared_ptr<const validate::TimelineCheck> check;  // its evaluation is the predicted side of the same plan
};

// `j` is the parsed content of `path`. Every error is InputError("timeline", "PATH: FIELD: ...").
MeasuredCheck check_timeline_json(const nlohmann::json& j, const std::string& path);
// Reads `path` and checks it; errors as above (a file that cannot be read or parsed too).
MeasuredCheck check_timeline_file(const std::string& path);

}  // namespace mlasim::gui
