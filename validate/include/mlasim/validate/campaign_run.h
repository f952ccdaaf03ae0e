#pragma once
// Runs a campaign's configurations on the kernels and appends one measurement row per configuration to a CSV.
// The file is the run's state: a rerun skips the configurations it already holds, and a run killed at any moment
// loses at most the row in flight (each row is one write of a whole line; a torn last line is cut on resume).
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "mlasim/validate/campaign.h"
#include "mlasim/validate/kernel_measurer.h"
#include "mlasim/validate/measurement_csv.h"

namespace mlasim::validate {

struct CampaignRunOptions {
  std::string out;         // the measurement CSV (created with its header, or resumed)
  double max_seconds = 0;  // stop after this many seconds (0: no limit); the row in flight is finished
  std::string commit;      // provenance
  std::string date;
  std::string command;
};

struct CampaignRunResult {
  int measured = 0;          // rows written by this run
  int already_measured = 0;  // configurations skipped because the file had them
  // Configurations whose kernels left output unwritten: no row is written for them (a rerun tries them again).
  std::vector<std::string> incomplete;
  // Configurations the kernels cannot run (e.g. a plan folding heads into tiles they have no variant for):
  // "ID: reason", no row.
  std::vector<std::string> unrunnable;
  bool stopped_by_time = false;
};

// The configuration ids of `campaign_id` that `path` already holds, after cutting a torn last line off the file.
// A missing file holds none; a file with another header is an InputError("out", ...).
std::set<std::string> resume_measurement_file(const std::string& path, const std::string& campaign_id);

// The row a configuration's timing makes, with the run's provenance. `plan` is the plan that ran: its KV
// (for a sparse plan, the gathered rows) gives kv_bytes.
MeasurementRow campaign_row(const Campaign& c, const CampaignConfig& config, const sim::Plan& plan,
                            const KernelTiming& t, const DeviceInfo& device, const CampaignRunOptions& o);

// `progress(done, total, elapsed_seconds)` is called after each configuration.
CampaignRunResult run_campaign(const Campaign& c, const CampaignPlan& plan, KernelMeasurer& measurer,
                               const CampaignRunOptions& o,
                               const std::function<void(size_t, size_t, double)>& progress = {});

}  // namespace mlasim::validate
