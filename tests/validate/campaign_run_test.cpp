// The campaign runner's file contract: rows with provenance, resume after a kill at any moment with every
// configuration measured exactly once, a torn last line cut, and a file of another kind refused.
#include "mlasim/validate/campaign_run.h"
#include "mlasim/validate/timeline_run.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "mlasim/model/input_error.h"
#include "mlasim/sim/evaluation.h"
#include "support/input_error_of.h"
#include "timeline_from_prediction.h"

namespace mlasim::validate {
namespace {

using mlasim::testing_support::input_error_of;

// Stands in for the GPU (which CI does not have): a measurer that takes a fixed time per configuration and
// reports the simulated kernel time, so the runner's file handling can be tested on its own.
class SlowTestMeasurer final : public KernelMeasurer {
 public:
  explicit SlowTestMeasurer(std::chrono::milliseconds per_config) : per_config_(per_config) {}
  DeviceInfo device() const override { return {"test device", "test driver", 1000, 2000, 8}; }
  KernelTiming measure(const sim::Plan& plan, const DecodeBatch& batch, const MeasureOptions&) override {
    std::this_thread::sleep_for(per_config_);
    KernelTiming t;
    t.stage1_us = 10.0 + plan.num_works() + batch.size();
    t.reduce_us = 1.0;
    t.kernel_us = t.stage1_us + t.reduce_us;
    t.kernel = "test";
    t.output_complete = true;
    return t;
  }
  MeasuredTimeline record_timeline(const sim::Plan& plan, const DecodeBatch& batch, const MeasureOptions&) override {
    std::this_thread::sleep_for(per_config_);
    const Gpu& gpu = *sim::gpu_profile("h100");
    return testing::timeline_from_prediction(plan, sim::simulate(plan, batch, gpu, cost_params_for(gpu)));
  }
  std::vector<StreamReadPoint> stream_read_sweep() override { return {}; }

 private:
  std::chrono::milliseconds per_config_;
};

Campaign small_campaign() {
  return campaign_from_json(nlohmann::json::parse(R"({"id": "kill-test", "gpu": "h100",
      "axes": {"batch": [1, 2, 3, 4, 5, 6], "context": [1000, 3000], "spread": [0, 1.0]},
      "policies": ["aiter-v1", "fixed:splits=2"]})"));
}

std::string temp_csv(const std::string& name) {
  return ::testing::TempDir() + "mlasim_campaign_" + std::to_string(::getpid()) + "_" + name;
}

std::map<std::string, int> id_counts(const std::string& path) {
  std::map<std::string, int> counts;
  for (const MeasurementRow& row : read_measurement_csv(path)) ++counts[row.config_id];
  return counts;
}

size_t line_count(const std::string& path) {
  std::ifstream in(path);
  return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

TEST(CampaignRun, RowsCarryTheirProvenance) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  const std::string path = temp_csv("provenance.csv");
  std::filesystem::remove(path);
  SlowTestMeasurer measurer(std::chrono::milliseconds(0));
  const CampaignRunResult r = run_campaign(c, plan, measurer, {path, 0, "abc1234", "2026-11-23", "mlasim validate x"});
  EXPECT_EQ(r.measured, static_cast<int>(plan.configs.size()));
  const std::vector<MeasurementRow> rows = read_measurement_csv(path);
  ASSERT_EQ(rows.size(), plan.configs.size());
  int ragged = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MeasurementRow& row = rows[i];
    EXPECT_EQ(row.config_id, plan.configs[i].id);
    EXPECT_EQ(row.campaign, "kill-test");
    EXPECT_EQ(row.commit, "abc1234");
    EXPECT_EQ(row.date, "2026-11-23");
    EXPECT_EQ(row.source, "measured: mlasim validate x");
    EXPECT_EQ(row.device, "test device");
    EXPECT_EQ(row.sm_clock_mhz, 1000);
    EXPECT_EQ(row.mem_clock_mhz, 2000);
    EXPECT_EQ(row.driver, "test driver");
    EXPECT_EQ(row.kernel, "test");
    EXPECT_EQ(row.lengths(), plan.configs[i].workload.batch.lengths());
    ragged += !row.context.has_value();
  }
  EXPECT_GT(ragged, 0);
  std::filesystem::remove(path);
}

TEST(CampaignRun, AKilledRunResumesWithEveryRowExactlyOnce) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  ASSERT_GE(plan.configs.size(), 40u);
  const std::string path = temp_csv("killed.csv");
  std::filesystem::remove(path);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SlowTestMeasurer measurer(std::chrono::milliseconds(20));
    run_campaign(c, plan, measurer, {path, 0, "abc", "d", "first run"});
    _exit(0);
  }
  // Kill the first run half-way, without warning, whatever it is doing.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         (!std::filesystem::exists(path) || line_count(path) < plan.configs.size() / 2 + 1))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const size_t rows_before = line_count(path) - 1;
  EXPECT_GE(rows_before, plan.configs.size() / 2);
  EXPECT_LT(rows_before, plan.configs.size());

  SlowTestMeasurer measurer(std::chrono::milliseconds(0));
  const CampaignRunResult r = run_campaign(c, plan, measurer, {path, 0, "abc", "d", "second run"});
  EXPECT_EQ(r.already_measured + r.measured, static_cast<int>(plan.configs.size()));
  const std::map<std::string, int> counts = id_counts(path);
  EXPECT_EQ(counts.size(), plan.configs.size());
  for (const CampaignConfig& config : plan.configs) EXPECT_EQ(counts.at(config.id), 1) << config.id;
  std::filesystem::remove(path);
}

TEST(CampaignRun, ATornLastLineIsCutAndMeasuredAgain) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  const std::string path = temp_csv("torn.csv");
  std::filesystem::remove(path);
  SlowTestMeasurer measurer(std::chrono::milliseconds(0));
  run_campaign(c, plan, measurer, {path, 0, "abc", "d", "run"});
  // Cut the file inside its last row, as a kill during a write could.
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 20);
  const std::set<std::string> ids = resume_measurement_file(path, c.id);
  EXPECT_EQ(ids.size(), plan.configs.size() - 1);
  const CampaignRunResult r = run_campaign(c, plan, measurer, {path, 0, "abc", "d", "run"});
  EXPECT_EQ(r.measured, 1);
  EXPECT_EQ(id_counts(path).size(), plan.configs.size());
  std::filesystem::remove(path);
}

TEST(CampaignRun, MaxSecondsStopsAndTheRerunGoesOn) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  const std::string path = temp_csv("budget.csv");
  std::filesystem::remove(path);
  SlowTestMeasurer measurer(std::chrono::milliseconds(30));
  const CampaignRunResult first = run_campaign(c, plan, measurer, {path, 0.1, "abc", "d", "run"});
  EXPECT_TRUE(first.stopped_by_time);
  EXPECT_LT(first.measured, static_cast<int>(plan.configs.size()));
  SlowTestMeasurer fast(std::chrono::milliseconds(0));
  const CampaignRunResult second = run_campaign(c, plan, fast, {path, 0, "abc", "d", "run"});
  EXPECT_FALSE(second.stopped_by_time);
  EXPECT_EQ(first.measured + second.measured, static_cast<int>(plan.configs.size()));
  std::filesystem::remove(path);
}

TEST(CampaignRun, AFileOfAnotherKindIsRefused) {
  const std::string path = temp_csv("other.csv");
  std::ofstream(path) << "a,b,c\n1,2,3\n";
  EXPECT_THROW(resume_measurement_file(path, "x"), InputError);
  std::filesystem::remove(path);
}

TEST(TimelineRun, WritesOneTraceFilePerConfigurationAndSkipsThemOnARerun) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  const std::string dir = temp_csv("timelines");
  std::filesystem::remove_all(dir);
  SlowTestMeasurer measurer(std::chrono::milliseconds(0));
  const TimelineRunResult first = record_campaign_timelines(c, plan, measurer, {dir, 0, "abc", "2026-11-24", "cmd"});
  EXPECT_EQ(first.recorded, static_cast<int>(plan.configs.size()));
  for (const CampaignConfig& config : plan.configs) {
    const MeasuredTimeline t = load_measured_timeline(timeline_path(dir, config));
    EXPECT_EQ(t.config_id, config.id);
    EXPECT_EQ(t.workload, config.workload);
    EXPECT_EQ(t.commit, "abc");
    EXPECT_EQ(t.device, "test device");
    EXPECT_FALSE(t.works.empty());
  }
  const TimelineRunResult second = record_campaign_timelines(c, plan, measurer, {dir, 0, "abc", "2026-11-24", "cmd"});
  EXPECT_EQ(second.recorded, 0);
  EXPECT_EQ(second.already_recorded, static_cast<int>(plan.configs.size()));
  std::filesystem::remove_all(dir);
}

TEST(TimelineRun, AFolderThatCannotBeMadeFailsBeforeAnyMeasurement) {
  const Campaign c = small_campaign();
  const CampaignPlan plan = expand_campaign(c);
  const std::string file = temp_csv("not_a_folder");
  { std::ofstream(file) << "x"; }
  SlowTestMeasurer measurer(std::chrono::milliseconds(0));
  const auto e = input_error_of([&] {
    record_campaign_timelines(c, plan, measurer, {file + "/sub", 0, "abc", "d", "cmd"});
  });
  ASSERT_TRUE(e) << "expected an InputError";
  EXPECT_EQ(e->field(), "timeline");
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace mlasim::validate
