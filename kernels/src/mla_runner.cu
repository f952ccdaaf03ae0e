#include "mlasim/kernels/mla_runner.h"

#include <algorithm>
#include <memory>
#include <string>

#include "l2_flush.h"
#include "mla_launch.h"
#include "mlasim/kernels/gpu_check.h"
#include "mlasim/model/input_error.h"
#include "mlasim/sim/kernel_choice.h"
#include "mlasim/sim/reduce_launch.h"

namespace mlasim::kernels {
namespace {

static_assert(sizeof(WorkRow) == sizeof(sim::WorkInfo), "work rows are uploaded as they are");

// One device allocation, freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0) MLASIM_GPU_CHECK(hipMalloc(&ptr_, bytes));
  }
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    if (bytes_ > 0) MLASIM_GPU_CHECK(hipMemcpy(ptr_, host.data(), bytes_, hipMemcpyHostToDevice));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) (void)hipFree(ptr_);
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

DecodeKernel parse_decode_kernel(const std::string& name) {
  if (name == "auto") return DecodeKernel::automatic;
  if (name == "portable") return DecodeKernel::portable;
  if (name == "wgmma") return DecodeKernel::wgmma;
  throw InputError("decode", "unknown decode kernel '" + name + "' (allowed: auto, portable, wgmma)");
}

const char* decode_kernel_name(DecodeKernel k) {
  switch (k) {
    case DecodeKernel::automatic: return "auto";
    case DecodeKernel::portable: return "portable";
    case DecodeKernel::wgmma: return "wgmma";
  }
  return "?";
}

bool gpu_available() {
  int n = 0;
  return hipGetDeviceCount(&n) == hipSuccess && n > 0;
}

int gpu_driver_version() {
  int v = 0;
  MLASIM_GPU_CHECK(hipDriverGetVersion(&v));
  return v;
}

bool wgmma_decode_available() {
  if (!wgmma_decode_built() || !gpu_available()) return false;
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return prop.major == 9;
}

std::string gpu_description() {
  hipDeviceProp_t prop;
  MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
  return std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs/CUs, driver API " +
         std::to_string(gpu_driver_version());
}

struct MlaRunner::Impl {
  const sim::Plan& plan;
  const MlaProblem& problem;
  DeviceBuffer q, kv, kv_indices, b_page, b_len, b_qbeg, b_qlen, work_indptr, works;
  DeviceBuffer out, partial_out, partial_lse;
  DeviceBuffer reduce_indptr, reduce_final, reduce_partial;
  DeviceBuffer stage1_stamps, reduce_stamps;  // made by the first instrumented launch
  std::unique_ptr<L2Flush> flush;             // made by the first timing that flushes
  DecodeParams dp;
  ReduceParams rp;
  sim::ReduceLaunch reduce_shape;
  int groups = 1;
  int num_cu = 0;
  DecodeKernel kernel = DecodeKernel::portable;
  int pair = 1;
  int max_partials_per_tile = 0;
  Fp8TensorMaps fp8_maps;

  Impl(const sim::Plan& pl, const MlaProblem& pr, DecodeKernel requested) : plan(pl), problem(pr) {
    hipDeviceProp_t prop;
    MLASIM_GPU_CHECK(hipGetDeviceProperties(&prop, 0));
    num_cu = prop.multiProcessorCount;
    if (plan.derived.num_heads_eff != problem.heads || plan.derived.qk_batch_ratio != problem.qk_batch_ratio)
      throw InputError("plan", "the plan's heads/folding do not match the problem's");
    q = DeviceBuffer(problem.q);
    kv = DeviceBuffer(problem.kv);
    kv_indices = DeviceBuffer(problem.kv_indices);
    b_page = DeviceBuffer(problem.batch_kv_page_begin);
    b_len = DeviceBuffer(problem.batch_kv_len);
    b_qbeg = DeviceBuffer(problem.batch_q_begin);
    b_qlen = DeviceBuffer(problem.batch_qlen);
    work_indptr = DeviceBuffer(plan.work_indptr);
    works = DeviceBuffer(plan.works);
    const size_t out_elems = static_cast<size_t>(problem.q_rows) * problem.heads * 512;
    out = DeviceBuffer(out_elems * 2);
    // Partial rows: every partial location plus the rows its fragment spans.
    int partial_rows = 0;
    for (const auto& w : plan.works)
      if (w.partial_qo_loc >= 0) partial_rows = std::max(partial_rows, w.partial_qo_loc + w.qo_rows());
    partial_out = DeviceBuffer(static_cast<size_t>(partial_rows) * problem.heads * 512 * 4);
    partial_lse = DeviceBuffer(static_cast<size_t>(partial_rows) * problem.heads * 4);
    reduce_indptr = DeviceBuffer(plan.reduce_indptr);
    std::vector<int32_t> final_map;
    for (const auto& f : plan.reduce_final_map) final_map.insert(final_map.end(), f.begin(), f.end());
    final_map.resize(std::max<size_t>(final_map.size(), 2 * std::max<size_t>(plan.reduce_indptr.size(), 1)),
                     sim::kUnwritten);
    reduce_final = DeviceBuffer(final_map);
    reduce_partial = DeviceBuffer(plan.reduce_partial_map);

    // Packed rows per tile, as the model's kernel choice counts them (the plan's heads match the problem's).
    const int tile_rows = sim::plan_tile_rows(plan, problem.batch);
    groups = decode_groups_for(tile_rows);
    kernel = choose_kernel(requested);
    const bool bf16_wgmma = kernel == DecodeKernel::wgmma && problem.batch.kv_dtype == DType::bf16;
    pair = bf16_wgmma ? wgmma_pair_for(tile_rows) : 1;

    dp.q = q.as<uint16_t>();
    dp.kv = kv.as<unsigned char>();
    dp.kv_slots = static_cast<int64_t>(problem.kv.size()) / (DecodeBatch::kQkHeadDim * problem.kv_elem_bytes());
    dp.kv_indices = kv_indices.as<int32_t>();
    dp.batch_kv_page_begin = b_page.as<int32_t>();
    dp.batch_kv_len = b_len.as<int32_t>();
    dp.batch_q_begin = b_qbeg.as<int32_t>();
    dp.batch_qlen = b_qlen.as<int32_t>();
    dp.work_indptr = work_indptr.as<int32_t>();
    dp.works = works.as<WorkRow>();
    dp.out = out.as<uint16_t>();
    dp.partial_out = partial_out.as<float>();
    dp.partial_lse = partial_lse.as<float>();
    dp.heads = problem.heads;
    dp.page_size = problem.batch.page_size;
    dp.causal = problem.batch.causal ? 1 : 0;
    dp.score_scale_log2 = problem.sm_scale * 1.4426950408889634f * problem.kv_scale;
    dp.out_scale = problem.kv_scale;

    rp.reduce_indptr = reduce_indptr.as<int32_t>();
    rp.reduce_final_map = reduce_final.as<int32_t>();
    rp.reduce_partial_map = reduce_partial.as<int32_t>();
    rp.partial_out = partial_out.as<float>();
    rp.partial_lse = partial_lse.as<float>();
    rp.out = out.as<uint16_t>();
    rp.num_tiles = std::max(0, static_cast<int>(plan.reduce_indptr.size()) - 1);
    rp.heads = problem.heads;
    rp.num_partials = plan.reduce_indptr.empty() ? 0 : plan.reduce_indptr.back();
    reduce_shape = sim::aiter_reduce_launch(rp.num_tiles, problem.heads, num_cu, problem.batch.max_qo_len());
    rp.row_groups = reduce_shape.row_groups;
    for (size_t i = 0; i + 1 < plan.reduce_indptr.size(); ++i)
      max_partials_per_tile = std::max(max_partials_per_tile, plan.reduce_indptr[i + 1] - plan.reduce_indptr[i]);
    if (kernel == DecodeKernel::wgmma && problem.batch.kv_dtype == DType::fp8) fp8_maps = make_fp8_tensor_maps(dp);
  }

  // The wgmma kernels (bf16 and fp8 KV) need an sm_90a build and a 9.x device. Where they can run, automatic
  // follows sim::hopper_kernel_runs, the rule the model's kernel classes use too (docs/kernels.md).
  DecodeKernel choose_kernel(DecodeKernel requested) const {
    const bool wgmma_ok = wgmma_decode_available();
    if (requested == DecodeKernel::wgmma && !wgmma_ok)
      throw InputError("decode", "the wgmma kernel needs an sm_90a build and a compute capability 9.x GPU");
    if (requested != DecodeKernel::automatic) return requested;
    return wgmma_ok && sim::hopper_kernel_runs(problem.batch.kv_dtype, problem.batch.page_size)
               ? DecodeKernel::wgmma
               : DecodeKernel::portable;
  }

  void stage1(hipStream_t stream = nullptr) {
    const bool persistent = plan.kernel == sim::KernelKind::persistent;
    const bool fp8 = problem.batch.kv_dtype == DType::fp8;
    if (kernel == DecodeKernel::wgmma) {
      const int count = persistent ? plan.num_clusters() : plan.num_works();
      if (fp8)
        launch_mla_decode_wgmma_fp8(dp, fp8_maps, persistent, count, stream);
      else
        launch_mla_decode_wgmma(dp, persistent, pair, count, stream);
      return;
    }
    if (plan.kernel == sim::KernelKind::persistent)
      launch_mla_decode_persistent(dp, fp8, groups, plan.num_clusters(), stream);
    else
      launch_mla_decode_splitkv(dp, fp8, groups, plan.num_works(), stream);
  }
  void reduce(hipStream_t stream = nullptr) {
    if (rp.num_partials > 0) launch_mla_reduce(rp, reduce_shape.blocks, max_partials_per_tile, stream);
  }

  // Workgroups per work in the stamp buffer: the bf16 wgmma kernel's SM pairs record one stamp each.
  int stamp_stride() const { return kernel == DecodeKernel::wgmma && problem.batch.kv_dtype == DType::bf16 ? pair : 1; }

  // Points the launches at the stamp buffers (on) or not (off).
  void instrument(bool on) {
    if (on && stage1_stamps.bytes() == 0) {
      stage1_stamps = DeviceBuffer(sizeof(WorkStamp) * std::max<size_t>(plan.works.size() * stamp_stride(), 1));
      reduce_stamps = DeviceBuffer(sizeof(WorkStamp) * static_cast<size_t>(std::max(reduce_shape.blocks, 1)));
    }
    dp.stamps = on ? stage1_stamps.as<WorkStamp>() : nullptr;
    dp.stamp_stride = stamp_stride();
    rp.stamps = on ? reduce_stamps.as<WorkStamp>() : nullptr;
  }
};

MlaRunner::MlaRunner(const sim::Plan& plan, const MlaProblem& problem, DecodeKernel kernel)
    : impl_(std::make_unique<Impl>(plan, problem, kernel)) {}
MlaRunner::~MlaRunner() = default;

DecodeKernel MlaRunner::decode_kernel() const { return impl_->kernel; }
int MlaRunner::workgroups_per_cluster() const { return impl_->pair; }

void MlaRunner::run() {
  impl_->stage1();
  impl_->reduce();
  MLASIM_GPU_CHECK(hipDeviceSynchronize());
}

void MlaRunner::launch(void* stream) {
  const auto s = static_cast<hipStream_t>(stream);
  impl_->stage1(s);
  impl_->reduce(s);
  MLASIM_GPU_CHECK(hipGetLastError());
}

void MlaRunner::poison_output() {
  MLASIM_GPU_CHECK(hipMemset(impl_->out.as<void>(), 0xff, impl_->out.bytes()));
  MLASIM_GPU_CHECK(hipDeviceSynchronize());
}

std::vector<uint16_t> MlaRunner::output() const {
  std::vector<uint16_t> host(impl_->out.bytes() / 2);
  MLASIM_GPU_CHECK(hipMemcpy(host.data(), impl_->out.as<void>(), impl_->out.bytes(), hipMemcpyDeviceToHost));
  return host;
}

StageTimes MlaRunner::time(const TimingOptions& options) {
  hipEvent_t e0, e1, e2;
  MLASIM_GPU_CHECK(hipEventCreate(&e0));
  MLASIM_GPU_CHECK(hipEventCreate(&e1));
  MLASIM_GPU_CHECK(hipEventCreate(&e2));
  std::vector<double> s1, red, tot;
  if (options.flush_l2 && !impl_->flush) impl_->flush = std::make_unique<L2Flush>();
  impl_->instrument(options.instrument);
  for (int i = 0; i < options.warmup + options.repetitions; ++i) {
    if (options.flush_l2) impl_->flush->run(nullptr);
    MLASIM_GPU_CHECK(hipEventRecord(e0, nullptr));
    impl_->stage1();
    MLASIM_GPU_CHECK(hipEventRecord(e1, nullptr));
    impl_->reduce();
    MLASIM_GPU_CHECK(hipEventRecord(e2, nullptr));
    MLASIM_GPU_CHECK(hipEventSynchronize(e2));
    if (i < options.warmup) continue;
    float a = 0, b = 0;
    MLASIM_GPU_CHECK(hipEventElapsedTime(&a, e0, e1));
    MLASIM_GPU_CHECK(hipEventElapsedTime(&b, e1, e2));
    s1.push_back(1000.0 * a);
    red.push_back(1000.0 * b);
    tot.push_back(1000.0 * (a + b));
  }
  (void)hipEventDestroy(e0);
  (void)hipEventDestroy(e1);
  (void)hipEventDestroy(e2);
  impl_->instrument(false);
  return {median(s1), median(red), median(tot)};
}

RunStamps MlaRunner::record_stamps(const TimingOptions& options) {
  Impl& m = *impl_;
  for (int i = 0; i < options.warmup; ++i) {
    m.stage1();
    m.reduce();
  }
  if (options.flush_l2) {
    if (!m.flush) m.flush = std::make_unique<L2Flush>();
    m.flush->run(nullptr);
  }
  m.instrument(true);
  MLASIM_GPU_CHECK(hipMemset(m.stage1_stamps.as<void>(), 0, m.stage1_stamps.bytes()));
  MLASIM_GPU_CHECK(hipMemset(m.reduce_stamps.as<void>(), 0, m.reduce_stamps.bytes()));
  m.stage1();
  m.reduce();
  MLASIM_GPU_CHECK(hipDeviceSynchronize());
  const bool reduce_ran = m.rp.num_partials > 0;
  m.instrument(false);

  const int stride = m.stamp_stride();
  std::vector<WorkStamp> s1(m.plan.works.size() * static_cast<size_t>(stride));
  std::vector<WorkStamp> red(static_cast<size_t>(reduce_ran ? m.reduce_shape.blocks : 0));
  if (!s1.empty())
    MLASIM_GPU_CHECK(
        hipMemcpy(s1.data(), m.stage1_stamps.as<void>(), s1.size() * sizeof(WorkStamp), hipMemcpyDeviceToHost));
  if (!red.empty())
    MLASIM_GPU_CHECK(
        hipMemcpy(red.data(), m.reduce_stamps.as<void>(), red.size() * sizeof(WorkStamp), hipMemcpyDeviceToHost));
  RunStamps out;
  for (size_t i = 0; i < s1.size(); ++i) {
    const WorkStamp& w = s1[i];
    if (w.begin_ns == 0 || w.end_ns < w.begin_ns || w.first_kv_ns > w.end_ns)
      throw GpuError("instrumented run: work " + std::to_string(i / stride) + " left no consistent stamp");
    // A work with no KV tile (an empty range) never issues one: its fixed part is all of it.
    const uint64_t first_kv = w.first_kv_ns >= w.begin_ns ? w.first_kv_ns : w.end_ns;
    out.stage1.push_back({static_cast<int>(i / stride), static_cast<int>(i % stride), static_cast<int>(w.cu),
                          w.begin_ns, first_kv, w.end_ns, w.sm_cycles});
  }
  for (size_t b = 0; b < red.size(); ++b) {
    const WorkStamp& w = red[b];
    if (w.begin_ns == 0 || w.end_ns < w.begin_ns)
      throw GpuError("instrumented run: reduce block " + std::to_string(b) + " left no consistent stamp");
    out.reduce.push_back({static_cast<int>(b), 0, static_cast<int>(w.cu), w.begin_ns, 0, w.end_ns, w.sm_cycles});
  }
  return out;
}

}  // namespace mlasim::kernels
