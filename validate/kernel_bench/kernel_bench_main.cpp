// Times stage 1 + reduce of the kernels on the speed configurations of docs/kernels.md and the streaming-read
// sweep, and writes one measurement CSV row per configuration (medians, L2 flushed between repetitions).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mlasim/kernels/mla_reference.h"
#include "mlasim/kernels/mla_runner.h"
#include "mlasim/kernels/stream_read.h"
#include "mlasim/model/csv_cell.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/model/text_file.h"
#include "mlasim/sim/split_policy.h"
#include "mlasim/validate/measurement_csv.h"

namespace {

using namespace mlasim;

struct SpeedConfig {
  std::string policy;
  int batch, context, heads, qlen;
  DType kv;
  int page;
  int clusters = 0;  // 0: the whole GPU; 128-head tiles on Hopper take an SM pair per cluster (66 on an H100)
};

std::vector<SpeedConfig> speed_configs() {
  const std::string v1 = "aiter-v1:max_split_per_batch=-1";
  return {
      {v1, 128, 4096, 16, 1, DType::bf16, 64},     {"aiter-v1", 128, 4096, 16, 1, DType::bf16, 64},
      {v1, 4, 100000, 16, 1, DType::bf16, 64},     {v1, 4, 100000, 16, 1, DType::bf16, 1},
      {v1, 4, 100000, 16, 1, DType::bf16, 16},     {v1, 128, 4096, 16, 1, DType::fp8, 64},
      {v1, 64, 16384, 16, 1, DType::fp8, 64},      {v1, 4, 100000, 16, 1, DType::fp8, 64},
      {v1, 4, 100000, 16, 1, DType::fp8, 1},       {v1, 128, 4096, 16, 2, DType::fp8, 64},
      {v1, 128, 4096, 16, 4, DType::fp8, 64},      {v1, 128, 4096, 128, 1, DType::fp8, 64},
      {v1, 16, 2048, 16, 1, DType::fp8, 16},       {v1, 128, 4096, 16, 2, DType::bf16, 64},
      {v1, 128, 4096, 16, 4, DType::bf16, 64},     {v1, 128, 4096, 128, 1, DType::bf16, 64},
      {v1, 32, 8192, 128, 1, DType::bf16, 64},     {v1, 128, 4096, 128, 1, DType::bf16, 64, 66},
      {v1, 32, 8192, 128, 1, DType::bf16, 64, 66}, {v1, 64, 4096, 128, 2, DType::bf16, 64, 66},
      {v1, 1, 8192, 16, 1, DType::bf16, 64},       {v1, 16, 2048, 16, 1, DType::bf16, 16},
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mlasim kernel benchmark"};
  std::string gpu_name = "h100", out_path, stream_out_path, commit, date, command, only;
  int reps = 20;
  bool check = true;
  std::vector<std::string> decode_names{"auto"};
  app.add_option("--gpu", gpu_name, "GPU profile the plans are made for");
  app.add_option("--out", out_path, "kernel measurement CSV")->required();
  app.add_option("--stream-out", stream_out_path, "streaming-read sweep CSV (omit to skip the sweep)");
  app.add_option("--commit", commit, "source commit of the build")->required();
  app.add_option("--date", date, "run date")->required();
  app.add_option("--command", command, "command line recorded in the source column");
  app.add_option("--reps", reps, "timed repetitions per configuration");
  app.add_option("--only", only, "run only configurations whose label contains this text");
  app.add_option("--decode", decode_names, "stage-1 kernels to time: auto, portable, wgmma (comma list)")
      ->delimiter(',');
  app.add_flag("!--no-check", check, "skip the CPU reference check of small configurations");
  CLI11_PARSE(app, argc, argv);

  try {
    const Gpu gpu = load_gpu(gpu_name);
    // The files are checked before any GPU time is spent, and written whole (a rename) at the end.
    check_writable(out_path, "out");
    if (!stream_out_path.empty()) check_writable(stream_out_path, "stream-out");
    const std::string driver = "cuda-driver-api " + std::to_string(kernels::gpu_driver_version());
    std::printf("device: %s\n", kernels::gpu_description().c_str());
    std::vector<validate::MeasurementRow> rows;
    std::printf("%-34s %5s %6s %4s %2s %4s %3s %9s %9s %9s %7s %9s\n", "policy", "batch", "ctx", "H", "q", "kv", "pg",
                "stage1us", "reduceus", "totalus", "TB/s", "relerr");
    std::vector<kernels::DecodeKernel> decodes;
    for (const std::string& n : decode_names) decodes.push_back(kernels::parse_decode_kernel(n));
    for (const SpeedConfig& c : speed_configs())
      for (const kernels::DecodeKernel decode : decodes) {
        DecodeBatch batch = DecodeBatch::uniform(c.batch, c.context, c.qlen);
        batch.q_heads = c.heads;
        batch.q_dtype = DType::bf16;
        batch.kv_dtype = c.kv;
        batch.page_size = c.page;
        batch.kv_granularity = std::max(c.page, 16);
        const std::string label = c.policy + " b" + std::to_string(c.batch) + "x" + std::to_string(c.context) + " h" +
                                  std::to_string(c.heads) + " q" + std::to_string(c.qlen) + " " +
                                  std::string(dtype_name(c.kv)) + " p" + std::to_string(c.page) + " c" +
                                  std::to_string(c.clusters) + " " + kernels::decode_kernel_name(decode);
        if (!only.empty() && label.find(only) == std::string::npos) continue;
        const sim::Plan plan = sim::make_policy(c.policy)->plan({batch, gpu, c.clusters});
        const kernels::MlaProblem problem = kernels::MlaProblem::make(batch, plan, 7);
        std::unique_ptr<kernels::MlaRunner> runner_owner;
        try {
          runner_owner = std::make_unique<kernels::MlaRunner>(plan, problem, decode);
        } catch (const InputError& e) {
          std::printf("%-60s skipped: %s\n", label.c_str(), e.what());
          continue;
        }
        kernels::MlaRunner& runner = *runner_owner;
        const bool wgmma = runner.decode_kernel() == kernels::DecodeKernel::wgmma;
        runner.poison_output();
        runner.run();
        std::optional<double> err;
        const double flops = 2.0 * static_cast<double>(batch.total_kv_tokens()) * c.qlen * c.heads * 1088;
        if (check && flops < 4e10) {
          const auto e = kernels::compare_to_reference(runner.output(), kernels::mla_reference(problem));
          err = e.has_nan ? std::numeric_limits<double>::quiet_NaN() : e.relative();
        }
        const kernels::StageTimes t = runner.time({3, reps, true});
        validate::MeasurementRow r;
        r.gpu = gpu_name;
        r.kernel = std::string(wgmma ? "mla_decode_wgmma_" : "mla_decode_") +
                   (plan.kernel == sim::KernelKind::persistent ? "persistent" : "splitkv") + "+mla_reduce";
        r.policy = c.policy;
        r.batch = c.batch;
        r.context = c.context;
        r.heads = c.heads;
        r.qo_len = c.qlen;
        r.q_dtype = DType::bf16;
        r.kv_dtype = c.kv;
        r.page_size = c.page;
        r.clusters = plan.num_clusters();
        r.stage1_us = t.stage1_us;
        r.reduce_us = t.reduce_us;
        r.kernel_us = t.total_us;
        r.kv_bytes = static_cast<double>(problem.kv_bytes());
        r.kv_tbps = static_cast<double>(problem.kv_bytes()) / t.total_us * 1e-6;
        r.max_abs_err = err;
        r.driver = driver;
        r.commit = commit;
        r.date = date;
        r.source = "measured: " + command;
        rows.push_back(r);
        std::printf("%-34s %5d %6d %4d %2d %4s %3d %9.1f %9.1f %9.1f %7.3f %9.2g  %.1f TFLOP/s  %s x%d c%d\n",
                    c.policy.c_str(), c.batch, c.context, c.heads, c.qlen, std::string(dtype_name(c.kv)).c_str(),
                    c.page, t.stage1_us, t.reduce_us, t.total_us, *r.kv_tbps, err ? *err : -1.0,
                    flops / t.total_us * 1e-6, kernels::decode_kernel_name(runner.decode_kernel()),
                    runner.workgroups_per_cluster(), plan.num_clusters());
        std::fflush(stdout);
      }
    write_file_atomically(out_path, validate::format_measurement_csv(rows));

    if (!stream_out_path.empty()) {
      std::vector<int> sms;
      for (int n : {1, 2, 4, 8, 16, 24, 32, 48, 64, 80, 96, 112, 132}) sms.push_back(n);
      const auto points = kernels::stream_read_sweep(sms, {1, 2, 3, 4}, int64_t{48} << 20, 5);
      std::ostringstream s;
      s << "gpu,kernel,clusters,wg_per_cluster,bytes,kernel_us,tbps,driver,commit,date,source\n";
      for (const auto& p : points) {
        s << gpu_name << ",stream_read," << p.active_sms << "," << p.wg_per_sm << "," << p.bytes << "," << p.us << ","
          << p.tbps << "," << driver << "," << commit << "," << date << "," << csv_cell("measured: " + command) << "\n";
        std::printf("stream_read sms=%3d wg=%d %8.1f us %.3f TB/s\n", p.active_sms, p.wg_per_sm, p.us, p.tbps);
      }
      write_file_atomically(stream_out_path, s.str(), "stream-out");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
