// The kernels against the CPU fp32 reference on random plans of every registered policy, dense and sparse
// (top-k). Needs a GPU; skips visibly without one. Every case also runs instrumented: the same output, and
// consistent per-work stamps.
// MLASIM_GPU_TEST_CASES overrides the number of random cases (the sanitizer run uses few).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "mlasim/kernels/gpu_check.h"
#include "mlasim/kernels/mla_reference.h"
#include "mlasim/kernels/mla_runner.h"
#include "mlasim/model/gpu.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/split_policy.h"

namespace mlasim::kernels {
namespace {

class MlaDecodeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU device found: the GPU tests run on a GPU machine (make gpu-test)";
  }
};

// Policy specs to draw from: every registered policy with its defaults, plus the knob settings that matter.
std::vector<std::string> policy_specs() {
  std::vector<std::string> specs;
  for (const auto& info : sim::policy_registry()) {
    specs.push_back(info.name);
    if (info.name == "aiter-v1") {
      specs.push_back("aiter-v1:max_split_per_batch=-1");
      specs.push_back("aiter-v1:max_split_per_batch=4");
    }
    if (info.name == "fixed") {
      specs.push_back("fixed:splits=1");
      specs.push_back("fixed:splits=7");
    }
  }
  return specs;
}

int case_count(int fallback) {
  const char* env = std::getenv("MLASIM_GPU_TEST_CASES");
  return env ? std::atoi(env) : fallback;
}

struct CaseResult {
  std::string label;
  ErrorSummary error;
  ErrorSummary instrumented_error;  // the same launch with its stamp buffers
  std::string stamp_problem;        // empty when every stamp is consistent
  double tolerance = 0;
};

// What an instrumented run's stamps must satisfy: one per (work, workgroup), begin <= first KV <= end, an SM the
// device has, and on a persistent cluster its works one after another in list order.
std::string stamp_problem(const RunStamps& s, const sim::Plan& plan, int workgroups, int sms) {
  if (s.stage1.size() != plan.works.size() * static_cast<size_t>(workgroups))
    return "stage-1 stamps: " + std::to_string(s.stage1.size()) + " for " + std::to_string(plan.works.size()) +
           " works";
  for (const WorkgroupStamp& w : s.stage1) {
    if (!(w.begin_ns <= w.first_kv_ns && w.first_kv_ns <= w.end_ns))
      return "work " + std::to_string(w.index) + " times";
    if (w.cu < 0 || w.cu >= sms) return "work " + std::to_string(w.index) + " on SM " + std::to_string(w.cu);
  }
  if (plan.kernel == sim::KernelKind::persistent)
    for (int c = 0; c < plan.num_work_lists(); ++c)
      for (int i = plan.work_indptr[c] + 1; i < plan.work_indptr[c + 1]; ++i)
        for (int g = 0; g < workgroups; ++g) {
          const WorkgroupStamp& prev = s.stage1[static_cast<size_t>((i - 1) * workgroups + g)];
          const WorkgroupStamp& cur = s.stage1[static_cast<size_t>(i * workgroups + g)];
          if (cur.begin_ns < prev.end_ns || cur.cu != prev.cu)
            return "cluster " + std::to_string(c) + ": work " + std::to_string(i) + " overlaps or moved SM";
        }
  for (const WorkgroupStamp& b : s.reduce)
    if (b.end_ns < b.begin_ns || b.cu < 0 || b.cu >= sms) return "reduce block " + std::to_string(b.index);
  return "";
}

// One random case, run with the portable kernel and, where the GPU has it, the wgmma kernel too.
std::vector<CaseResult> run_random_case(std::mt19937& rng, const std::vector<std::string>& specs, const Gpu& gpu) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  DecodeBatch batch;
  const int heads = pick(3) == 0 ? 128 : 16;
  const int qlen = 1 + pick(4);
  const int requests = 1 + pick(heads == 128 ? 3 : 6);
  const int max_kv = heads == 128 ? 700 : 2500;
  batch.q_heads = heads;
  batch.q_dtype = DType::bf16;
  batch.kv_dtype = pick(2) ? DType::fp8 : DType::bf16;
  batch.page_size = std::array{1, 16, 64}[pick(3)];
  batch.kv_granularity = std::max(batch.page_size, 16);
  batch.causal = pick(5) != 0;
  for (int r = 0; r < requests; ++r) {
    batch.qo_lens.push_back(qlen);
    batch.kv_lens.push_back(qlen + pick(max_kv));
  }
  // A quarter of the cases are sparse (top-k): the kernels run the plan's gathered per-token batch, each token's
  // rows scattered through kv_indices at page size 1; contexts above and below the top-k.
  if (pick(4) == 0) {
    batch.page_size = 1;
    batch.kv_granularity = 16;
    batch.topk = std::array{64, 256, 2048}[pick(3)];
  }
  const std::string spec = specs[pick(static_cast<int>(specs.size()))];
  const int clusters = std::array{0, 0, 7, 40}[pick(4)];
  const sim::Plan plan = sim::make_policy(spec)->plan({batch, gpu, clusters});
  const MlaProblem problem = MlaProblem::make(batch, plan, rng());
  std::vector<DecodeKernel> kernels{DecodeKernel::portable};
  if (wgmma_decode_available()) kernels.push_back(DecodeKernel::wgmma);
  const auto reference = mla_reference(problem);
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::vector<CaseResult> results;
  for (const DecodeKernel kernel : kernels) {
    MlaRunner runner(plan, problem, kernel);
    runner.poison_output();
    runner.run();
    CaseResult r;
    r.error = compare_to_reference(runner.output(), reference);
    runner.poison_output();
    const RunStamps stamps = runner.record_stamps({1, 0, false, true});
    r.instrumented_error = compare_to_reference(runner.output(), reference);
    r.stamp_problem = stamp_problem(stamps, plan, runner.workgroups_per_cluster(), sms);
    r.tolerance = batch.kv_dtype == DType::fp8 ? 6e-2 : 2e-2;
    r.label = spec + " heads=" + std::to_string(heads) + " qlen=" + std::to_string(qlen) +
              " requests=" + std::to_string(requests) + " page=" + std::to_string(batch.page_size) +
              " kv=" + std::string(dtype_name(batch.kv_dtype)) + " causal=" + std::to_string(batch.causal) +
              " topk=" + std::to_string(batch.topk) + " clusters=" + std::to_string(plan.num_clusters()) +
              " works=" + std::to_string(plan.num_works()) + " partials=" + std::to_string(plan.num_partials()) +
              " kernel=" + decode_kernel_name(kernel) + " x" + std::to_string(runner.workgroups_per_cluster());
    results.push_back(r);
  }
  return results;
}

TEST_F(MlaDecodeGpu, RandomPlansMatchCpuReference) {
  const Gpu gpu = load_gpu("h100");
  const auto specs = policy_specs();
  std::mt19937 rng(20251122);
  const int cases = case_count(240);
  double worst = 0;
  int runs = 0, wgmma_runs = 0;
  for (int i = 0; i < cases; ++i) {
    std::vector<CaseResult> results;
    for (;;) {
      try {
        results = run_random_case(rng, specs, gpu);
        break;
      } catch (const InputError&) {
        // A policy that does not take this shape; draw another case.
      }
    }
    for (const CaseResult& r : results) {
      ++runs;
      wgmma_runs += r.label.find("kernel=wgmma") != std::string::npos;
      worst = std::max(worst, r.error.relative());
      EXPECT_TRUE(!r.error.has_nan && r.error.relative() <= r.tolerance)
          << "case " << i << ": " << r.label << " rel err " << r.error.relative() << " (max abs " << r.error.max_abs_err
          << ", scale " << r.error.output_scale << ")";
      EXPECT_TRUE(!r.instrumented_error.has_nan && r.instrumented_error.relative() <= r.tolerance)
          << "case " << i << " instrumented: " << r.label << " rel err " << r.instrumented_error.relative();
      EXPECT_EQ(r.stamp_problem, "") << "case " << i << ": " << r.label;
    }
  }
  std::printf("%d random cases, %d kernel runs (%d on the wgmma kernel%s), worst relative error %.3g\n", cases, runs,
              wgmma_runs, wgmma_decode_available() ? "" : ": not available on this GPU/build", worst);
}

// Sparse plans of every sparse-capable policy: each query token's rows gathered through kv_indices (page size 1),
// contexts below and above the top-k, two query tokens per request, both KV dtypes and both kernels.
TEST_F(MlaDecodeGpu, SparsePlansMatchCpuReference) {
  const Gpu gpu = load_gpu("h100");
  std::mt19937 rng(20261125);
  int runs = 0;
  for (const std::string spec :
       {"aiter-v1", "aiter-v1:max_split_per_batch=1", "aiter-nonpersistent", "flashmla", "fixed:splits=4"})
    for (const int heads : {16, 128})
      for (const DType kv : {DType::bf16, DType::fp8}) {
        DecodeBatch batch;
        batch.q_heads = heads;
        batch.q_dtype = DType::bf16;
        batch.kv_dtype = kv;
        batch.page_size = 1;
        batch.kv_granularity = 16;
        batch.topk = 2048;
        batch.kv_lens = {300, 2048, 5000};
        batch.qo_lens = {2, 2, 2};
        sim::Plan plan;
        try {
          plan = sim::make_policy(spec)->plan({batch, gpu, 0});
          const MlaProblem problem = MlaProblem::make(batch, plan, rng());
          const auto reference = mla_reference(problem);
          std::vector<DecodeKernel> kernels{DecodeKernel::portable};
          if (wgmma_decode_available()) kernels.push_back(DecodeKernel::wgmma);
          for (const DecodeKernel kernel : kernels) {
            MlaRunner runner(plan, problem, kernel);
            runner.poison_output();
            runner.run();
            const ErrorSummary e = compare_to_reference(runner.output(), reference);
            const double tolerance = kv == DType::fp8 ? 6e-2 : 2e-2;
            EXPECT_TRUE(!e.has_nan && e.relative() <= tolerance)
                << spec << " heads=" << heads << " kv=" << dtype_name(kv) << " kernel=" << decode_kernel_name(kernel)
                << ": rel err " << e.relative();
            ++runs;
          }
        } catch (const InputError& e) {
          // Shapes a policy or our kernels do not take (flashmla's 64-head groups at 128 heads, the
          // non-persistent grid on bf16 queries over fp8 KV) are refused, never run wrong.
          std::printf("not run: %s heads=%d kv=%s: %s\n", spec.c_str(), heads, std::string(dtype_name(kv)).c_str(),
                      e.what());
        }
      }
  std::printf("%d sparse kernel runs matched the reference\n", runs);
  EXPECT_GE(runs, 12);
}

}  // namespace
}  // namespace mlasim::kernels
