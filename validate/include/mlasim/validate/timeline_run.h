#pragma once
// Records a campaign's configurations as measured timelines (`mlasim validate --timeline DIR`): one Chrome-trace
// file per configuration, DIR/<configuration id>.json, each written whole through a rename. A rerun skips the
// configurations whose file exists, so a killed run goes on where it stopped.
#include <functional>
#include <string>
#include <vector>

#include "mlasim/validate/campaign.h"
#include "mlasim/validate/kernel_measurer.h"

namespace mlasim::validate {

struct TimelineRunOptions {
  std::string dir;         // created when missing
  double max_seconds = 0;  // stop after this many seconds (0: no limit)
  std::string commit;      // provenance
  std::string date;
  std::string command;
};

struct TimelineRunResult {
  int recorded = 0;
  int already_recorded = 0;
  std::vector<std::string> unrunnable;  // "ID: reason"
  bool stopped_by_time = false;
};

// DIR/<configuration id>.json
std::string timeline_path(const std::string& dir, const CampaignConfig& config);

// Throws InputError("timeline", ...) before measuring anything when `dir` cannot be created or written.
TimelineRunResult record_campaign_timelines(const Campaign& c, const CampaignPlan& plan, KernelMeasurer& measurer,
                                            const TimelineRunOptions& o,
                                            const std::function<void(size_t, size_t)>& progress = {});

}  // namespace mlasim::validate
