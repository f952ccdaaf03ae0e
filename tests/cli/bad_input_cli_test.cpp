// The bad-input table of docs/reliability.md, one test per row: every input a user may get wrong answers with one
// line naming the field, exit code 2, and no output file. A row's files are written to a fresh temp folder; `{D}`
// in its arguments is that folder, `{DATA}` the project's data folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace mlasim::cli_test {
namespace {

struct BadInput {
  const char* name;   // the test's name
  const char* args;   // mlasim's arguments
  const char* field;  // what the one error line must start with after "error: "
  std::vector<std::pair<const char*, std::string>> files = {};  // written into {D} first
  const char* mentions = "";  // and what else it must name (a field inside a file: its path in the file)
};

std::string h100_profile_with(const std::string& key, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(read_file(std::string(MLASIM_DATA_DIR) + "/gpus/h100.json"));
  nlohmann::json* at = &j;
  std::string rest = key;
  for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1))
    at = &(*at)[rest.substr(0, dot)];
  (*at)[rest] = value;
  return j.dump();
}

const std::string kCsvHeader =
    "gpu,kernel,policy,batch,context,heads,qo_len,q_dtype,kv_dtype,page_size,clusters,stage1_us,reduce_us,kernel_us,"
    "kv_bytes,kv_tbps,max_abs_err,driver,commit,date\n";
std::string csv_row(const std::string& batch, const std::string& q_dtype, const std::string& kernel_us) {
  return kCsvHeader + "h100,k,aiter-v1," + batch + ",4096,16,1," + q_dtype + ",bf16,64,0,," + "," + kernel_us +
         ",,,,d,c,2026-11-24\n";
}

const std::string kWorkload = R"({"gpu": "h100", "batch": {"kind": "uniform", "count": 4, "context": 4096}})";

std::string timeline_with(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(
      read_file(std::string(MLASIM_DATA_DIR) + "/measurements/h100/timelines/cf8ead7df3f69c5ec.json"));
  edit(j);
  return j.dump();
}

size_t first_work_event(const nlohmann::json& j) {
  size_t i = 0;
  while (j["traceEvents"][i].value("cat", "") != "work") ++i;
  return i;
}

std::vector<BadInput> rows() {
  return {
      // Workload flags (plan, predict, compare, sweep, report share them).
      {"BatchZero", "predict --gpu h100 --batch 0 --context 10", "batch"},
      {"ContextZero", "predict --gpu h100 --batch 4 --context 0", "context"},
      {"KvLensWithZero", "predict --gpu h100 --kv-lens 10,0,5", "kv-lens"},
      {"HeadsNotMultipleOf8", "predict --gpu h100 --batch 4 --context 1000 --heads 7", "heads"},
      {"QoLenZero", "predict --gpu h100 --batch 4 --context 1000 --qo-len 0", "qo-len"},
      {"PageSizeNotPowerOfTwo", "predict --gpu h100 --batch 4 --context 1000 --page-size 3", "page_size"},
      {"ClustersAboveCus", "predict --gpu h100 --batch 4 --context 1000 --clusters 999", "clusters"},
      {"UnknownDtype", "predict --gpu h100 --batch 4 --context 1000 --kv-dtype fp4", "kv-dtype"},
      {"UnknownGpu", "predict --gpu nosuch --batch 4 --context 1000", "gpu"},
      {"UnknownFormat", "predict --gpu h100 --batch 4 --context 1000 --format xml", "format"},
      // Policy specs.
      {"UnknownPolicy", "predict --gpu h100 --batch 4 --context 1000 --policy bogus", "policy"},
      {"KnobOutOfDomain", "predict --gpu h100 --batch 4 --context 1000 --policy aiter-v1:max_split_per_batch=0",
       "max_split_per_batch"},
      {"FixedSplitsZero", "predict --gpu h100 --batch 4 --context 1000 --policy fixed:splits=0", "splits"},
      {"PlanPastTheWorksLimit", "predict --gpu h100 --batch 4096 --context 100000 --policy fixed:splits=1024", "works"},
      // Sparse (top-k) decode.
      {"TopkNegative", "predict --gpu h100 --batch 4 --context 1000 --topk -1", "topk"},
      {"TopkLensAboveTopk", "predict --gpu h100 --batch 2 --context 4096 --topk 2048 --topk-lens 2048,4096",
       "topk_lens"},
      {"TopkWithPagedKv", "predict --gpu h100 --batch 4 --context 4096 --topk 2048 --page-size 64", "page_size"},
      {"TopkOnAPolicyWithoutASparsePath",
       "predict --gpu h100 --batch 4 --context 4096 --topk 2048 --policy flashinfer-mla", "topk"},
      // DeepSeek-V4's two scopes.
      {"Dsv4UnknownLayerKind", "predict --gpu h100 --batch 4 --context 4096 --dsv4 mla", "dsv4"},
      {"Dsv4CompressRatioOne", "predict --gpu h100 --batch 4 --context 4096 --dsv4 csa --compress-ratio 1",
       "compress_ratio"},
      {"Dsv4WithATopk", "predict --gpu h100 --batch 4 --context 4096 --dsv4 csa --topk 2048", "topk"},
      {"Dsv4WithPagedKv", "predict --gpu h100 --batch 4 --context 4096 --dsv4 hca --page-size 64", "page_size"},
      {"Dsv4UnknownScopeRun", "predict --gpu h100 --batch 4 --context 4096 --dsv4 csa --scope-run twice", "scope-run"},
      {"Dsv4OnAPolicyWithoutASparsePath",
       "predict --gpu h100 --batch 4 --context 4096 --dsv4 csa --policy flashinfer-mla", "dsv4"},
      {"BuffersDsv4", "buffers --gpu mi355x --batch 4 --context 4096 --dsv4 csa", "dsv4"},
      {"BuffersBatchPastItsLimit", "buffers --gpu mi355x --batch 300 --context 4096 --topk 2048 --max-batch 256 --fit",
       "max-batch"},
      {"BuffersMaxBatchPastTheBatchLimit", "buffers --gpu mi355x --batch 4 --context 4096 --max-batch 2000000000",
       "max-batch"},
      {"BuffersPolicyWithoutASizingRule", "buffers --gpu mi355x --batch 4 --context 4096 --policy fixed", "policy"},
      // Output files: checked before any work.
      {"SweepOutInMissingFolder",
       "sweep --gpu h100 --batch 1,2 --context 100,200 --policy aiter-v1 --out {D}/missing/x.csv", "out"},
      {"SweepOutIsAFolder", "sweep --gpu h100 --batch 1,2 --context 100,200 --policy aiter-v1 --out {D}", "out"},
      {"CalibrateOutInMissingFolder",
       "calibrate --gpu h100 --measurements {D}/m.csv --out {D}/missing/p.json",
       "out",
       {{"m.csv", csv_row("4", "bf16", "50")}}},
      // GPU profiles.
      {"ProfileBandwidthZero",
       "predict --gpu {D}/g.json --batch 4 --context 1000",
       "gpu.hbm_tbps",
       {{"g.json", h100_profile_with("hbm_tbps", 0)}}},
      {"ProfileCusZero",
       "predict --gpu {D}/g.json --batch 4 --context 1000",
       "gpu.num_cu",
       {{"g.json", h100_profile_with("num_cu", 0)}}},
      {"ProfileMatrixPeakZero",
       "predict --gpu {D}/g.json --batch 4 --context 1000",
       "gpu.matrix_tflops.bf16",
       {{"g.json", h100_profile_with("matrix_tflops.bf16", 0)}}},
      {"ProfileParamOutOfRange",
       "predict --gpu {D}/g.json --batch 4 --context 1000",
       "gpu.params.b_hbm_tbps",
       {{"g.json", h100_profile_with("params.b_hbm_tbps.value", 0)}}},
      {"ProfileNotJson", "predict --gpu {D}/g.json --batch 4 --context 1000", "gpu", {{"g.json", "{ not json"}}},
      // Measurement CSVs.
      {"MeasuredTimeZero",
       "report --gpu h100 --measurements {D}/m.csv",
       "kernel_us",
       {{"m.csv", csv_row("4", "bf16", "0")}}},
      {"MeasuredTimeNegative",
       "report --gpu h100 --measurements {D}/m.csv",
       "kernel_us",
       {{"m.csv", csv_row("4", "bf16", "-3")}}},
      {"MeasuredBatchZero",
       "report --gpu h100 --measurements {D}/m.csv",
       "batch",
       {{"m.csv", csv_row("0", "bf16", "50")}}},
      {"MeasuredDtypeUnknown",
       "report --gpu h100 --measurements {D}/m.csv",
       "q_dtype",
       {{"m.csv", csv_row("4", "fp4", "50")}}},
      {"AiterLogBadDtype",
       "report --gpu mi355x --measurements " MLASIM_TEST_DATA_DIR "/aiter_mla_persistent_log_bad_dtype.txt",
       "dtype",
       {},
       "line 11"},
      {"RocprofBadTimestamp",
       "report --gpu mi355x --measurements " MLASIM_TEST_DATA_DIR "/rocprofv3_kernel_trace_bad_timestamp.csv",
       "Start_Timestamp",
       {},
       "line 5"},
      {"HeldOutEveryNegative",
       "report --gpu h100 --measurements {D}/m.csv --held-out-every -1",
       "held-out-every",
       {{"m.csv", csv_row("4", "bf16", "50")}}},
      {"SessionsUnknown",
       "report --gpu h100 --measurements {D}/m.csv --sessions mean",
       "sessions",
       {{"m.csv", csv_row("4", "bf16", "50")}}},
      // Scenarios and campaigns.
      {"ScenarioBatchCountZero",
       "predict --scenario {D}/s.json",
       "scenario",
       {{"s.json", R"({"workload": {"gpu": "h100", "batch": {"kind": "uniform", "count": 0, "context": 4096}},
                      "policies": {"A": "aiter-v1"}})"}},
       "workload.batch.count: must be 1..65536"},
      {"ScenarioUnknownField",
       "predict --scenario {D}/s.json",
       "scenario",
       {{"s.json", R"({"workload": {"gpu": "h100", "contxt": 5}, "policies": {"A": "aiter-v1"}})"}},
       "workload.contxt: is not a scenario field"},
      {"CampaignTopkLens",
       "validate --dry-run {D}/c.json",
       "campaign",
       {{"c.json", std::string(R"({"id": "x", "gpu": "h100", "sampling": "list", "workloads": [)") +
                       R"({"gpu": "h100", "batch": {"kind": "uniform", "count": 2, "context": 4096}, "topk": 2048,
                         "topk_lens": [2048, 1024]}], "policies": ["aiter-v1"]})"}}},
      {"StepTraceNotJson", "step --trace {D}/t.json", "trace", {{"t.json", "{\"traceEvents\": [1,"}}},
      {"StepTraceWithoutKernels",
       "step --trace {D}/t.json",
       "trace",
       {{"t.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})"}}},
      {"StepTraceNegativeDuration",
       "step --trace {D}/t.json",
       "trace",
       {{"t.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]})"}},
       "traceEvents[0]: dur"},
      {"StepTraceMissing", "step --trace {D}/none.json", "trace"},
      {"StepTraceBadGrid",
       "step --trace {D}/t.json",
       "trace",
       {{"t.json",
         R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "args": {"grid": [4, 0, 1]}}]})"}},
       "args.grid[1]: must be an integer in [1, 2147483648], got 0"},
      {"StepRulesBadBatchFrom",
       "step --trace {D}/t.csv --rules {D}/r.json",
       "rules",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"r.json", R"({"name": "r", "rules": [{"class": "copy", "match": "k"}],
                      "batch_from": {"match": "k", "counts": "blocks"}})"}},
       "batch_from.counts: must be requests or tokens, got 'blocks'"},
      {"StepEditUnknown",
       "step --trace {D}/t.csv --edit bogus=1",
       "edit",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepPolicyEditUnknownPolicy",
       "step --trace {D}/t.csv --edit policy=foo",
       "edit",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"Dsv4ScopesPastTheTopkLimit",
       "predict --gpu mi355x --batch 1 --context 2200000 --dsv4 hca --compress-ratio 2",
       "dsv4",
       {}},
      {"StepMetadataUnknownPlanner",
       "step --trace {D}/t.csv --edit metadata=gpu-magic",
       "edit",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepFuseWithoutCost",
       "step --trace {D}/t.csv --edit fuse=q_prep",
       "edit",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepUnknownRules",
       "step --trace {D}/t.csv --rules nosuch",
       "rules",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepSkipPastTheSteps",
       "step --trace {D}/t.csv --skip 5",
       "skip",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepOpBytesBadMatch",
       "step --trace {D}/t.csv --edit remove=copy --op-bytes {D}/o.json",
       "op-bytes",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"o.json", R"({"ops": [{"match": "attention", "read_bytes": 1}]})"}},
       "ops[0].match: must be a step class"},
      {"StepOpBytesNegative",
       "step --trace {D}/t.csv --edit remove=copy --op-bytes {D}/o.json",
       "op-bytes",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"o.json", R"({"ops": [{"match": "copy", "written_bytes_per_request": -4}]})"}},
       "ops[0].written_bytes_per_request: must be in [0.0, 1e+15], got -4"},
      {"StepOpBytesMissing",
       "step --trace {D}/t.csv --edit remove=copy --op-bytes {D}/none.json",
       "op-bytes",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepBatchesZeroContext",
       "step --trace {D}/t.csv --step-batches {D}/b.json",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"b.json", R"({"steps": [{"kv_lens": [0]}]})"}},
       "steps[0].kv_lens"},
      {"StepBatchesBothForms",
       "step --trace {D}/t.csv --step-batches {D}/b.json",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"b.json", R"({"steps": [{"kv_lens": [5], "requests": 1, "context": 5}]})"}},
       "steps[0]: give kv_lens, or requests and context, not both"},
      {"StepBatchesOtherStepCount",
       "step --trace {D}/t.csv --step-batches {D}/b.json",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"b.json", R"({"steps": [{"requests": 1, "context": 5}, {"requests": 1, "context": 5}]})"}},
       "2 entries, where the trace has 1 step"},
      {"StepBatchesTooManyRequests",
       "step --trace {D}/t.csv --step-batches {D}/b.json",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"b.json", R"({"steps": [{"requests": 5000000, "context": 1}]})"}},
       "steps: ask for more than 4194304 requests over the file"},
      {"StepBatchesSparse",
       "step --trace {D}/t.csv --step-batches {D}/b.json --batch 2 --context 4096 --topk 2048",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"},
        {"b.json", R"({"steps": [{"kv_lens": [5]}]})"}},
       "dense"},
      {"StepBatchesMissing",
       "step --trace {D}/t.csv --step-batches {D}/none.json",
       "step-batches",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"StepPolicyEditWithoutAttention",
       "step --trace {D}/t.csv --edit policy=fixed:splits=2",
       "edit",
       {{"t.csv", "Kernel_Name,Start_Timestamp,End_Timestamp\nk,1,2\n"}}},
      {"CampaignDsv4",
       "validate --dry-run {D}/c.json",
       "campaign",
       {{"c.json", std::string(R"({"id": "x", "gpu": "h100", "sampling": "list", "workloads": [)") +
                       R"({"gpu": "h100", "batch": {"kind": "uniform", "count": 2, "context": 4096}, "dsv4": "csa"}],
                         "policies": ["aiter-v1"]})"}},
       "workloads[0].dsv4"},
      {"CampaignUnknownPolicy",
       "validate --dry-run {D}/c.json",
       "policy",
       {{"c.json", std::string(R"({"id": "x", "gpu": "h100", "sampling": "list", "workloads": [)") + kWorkload +
                       R"(], "policies": ["bogus"]})"}}},
      // Measured timelines.
      {"TimelineNegativeDuration",
       "report --timeline {D}/t.json",
       "timeline",
       {{"t.json", timeline_with([](nlohmann::json& j) { j["traceEvents"][first_work_event(j)]["dur"] = -1; })}}},
      {"TimelineNotOurs", "report --timeline {D}/t.json", "timeline", {{"t.json", timeline_with([](nlohmann::json& j) {
                                                                          j["otherData"].erase("mlasim");
                                                                        })}}},
      // Planner cases.
      {"PlanCasesBadLine", "plan --cases {D}/cases.jsonl", "cases", {{"cases.jsonl", "{\"inputs\": 5}\n"}}},
  };
}

class BadInputTable : public ::testing::TestWithParam<BadInput> {};

std::string substitute(std::string s, const std::string& dir) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{D}", dir}, {"{DATA}", MLASIM_DATA_DIR}})
    for (size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), value);
  return s;
}

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) names.push_back(e.path().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_P(BadInputTable, OneLineNamingTheFieldExit2NoFile) {
  const BadInput& row = GetParam();
  const std::string dir = temp_path(row.name);
  std::filesystem::create_directories(dir);
  for (const auto& [name, text] : row.files) write_file(dir + "/" + name, text);
  const std::vector<std::string> before = listing(dir);
  const CliResult r = run_cli(substitute(row.args, dir));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("mlasim: error: ", 0), 0u) << r.err;
  const std::string message = r.err.substr(std::min(r.err.size(), std::string("mlasim: error: ").size()));
  EXPECT_EQ(message.rfind(row.field, 0), 0u) << "expected the field '" << row.field << "' first: " << r.err;
  EXPECT_NE(message.find(row.mentions), std::string::npos) << "expected '" << row.mentions << "': " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(listing(dir), before) << "the run left a file behind";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputTable, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<BadInput>& row) { return std::string(row.param.name); });

}  // namespace
}  // namespace mlasim::cli_test
