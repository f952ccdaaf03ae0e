#pragma once
// Many measured timelines at once (`mlasim report --timeline DIR`): one line per timeline, the model against the
// measurement part by part (a work, stage 1, the gap before the reduce, the reduce, the event-timed kernel and what
// the events hold outside every workgroup), and the errors pooled over all of them. Where one timeline says where
// a plan's time goes, the summary says which part of the model misses across a campaign.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlasim/validate/measured_timeline.h"
#include "mlasim/validate/timeline_comparison.h"

namespace mlasim::validate {

struct TimelineSummaryRow {
  std::string file;
  std::string workload;  // sim::workload_label
  std::string policy;
  std::string kernel_class;
  TimelineComparison comparison;
  double measured_work_us = 0, predicted_work_us = 0;  // median work duration
  // The clock each stage-1 workgroup ran at (its SM's cycles over its span, MHz); empty where the timeline was
  // recorded before the kernels counted cycles.
  std::vector<double> measured_sm_mhz;
};

struct TimelineFile {
  std::string path;
  MeasuredTimeline timeline;
};

// The measured timelines `paths` name, each read once: a file as it is, a directory as its *.json and *.json.gz
// files that are measured timelines, by name (not searched recursively); `skipped` gets a directory's other JSON
// files (a step's predictions.json, a scenario). InputError("timeline", ...) for a path that does not exist, a
// directory that cannot be listed or holds no timeline, and a file that cannot be read as JSON or as a timeline,
// naming it.
std::vector<TimelineFile> load_timeline_files(const std::vector<std::string>& paths,
                                              std::vector<std::string>* skipped = nullptr);

// Checks a timeline against the model (check_measured_timeline: on `gpu`, or the timeline's own).
TimelineSummaryRow summarize_timeline(const TimelineFile& file, const std::string& gpu = "");

std::string timeline_summary_text(const std::vector<TimelineSummaryRow>& rows);
nlohmann::ordered_json timeline_summary_json(const std::vector<TimelineSummaryRow>& rows);

}  // namespace mlasim::validate
