#pragma once
// Run-time instrumentation of the kernels: when the launch passes a stamp buffer, one thread of each workgroup
// records, per work, its SM/CU, its start, the end of its fixed part and its end on the GPU's global clock. A
// null buffer costs one predictable branch per work (docs/validation.md measures the overhead).
#include <cstdint>

#include "mla_params.h"
#include "mlasim/kernels/gpu_runtime.h"

namespace mlasim::kernels {

// Nanoseconds of a clock all SMs/CUs share.
__device__ __forceinline__ uint64_t global_clock_ns() {
#if defined(MLASIM_GPU_NVIDIA)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return __builtin_amdgcn_s_memrealtime() * 10;  // the 100 MHz constant clock of gfx9
#endif
}

// The SM (NVIDIA) or CU (AMD: HIP's __smid, read from the HW_ID register) running this workgroup.
__device__ __forceinline__ uint32_t compute_unit_id() {
#if defined(MLASIM_GPU_NVIDIA)
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#else
  return static_cast<uint32_t>(__smid());
#endif
}

__device__ __forceinline__ WorkStamp* work_stamp(const DecodeParams& p, int work, int workgroup) {
  return p.stamps ? p.stamps + static_cast<int64_t>(work) * p.stamp_stride + workgroup : nullptr;
}

// Cycles of this SM's (CU's) own clock: its rate is the clock the SM runs at, which the power limit moves.
__device__ __forceinline__ uint32_t sm_clock_cycles() { return static_cast<uint32_t>(clock64()); }

// Called by one thread each; stamp_end by a thread on the same SM as stamp_begin (the counter is the SM's).
__device__ __forceinline__ void stamp_begin(WorkStamp* s) {
  if (s) {
    s->begin_ns = global_clock_ns();
    s->cu = compute_unit_id();
    s->sm_cycles = sm_clock_cycles();
  }
}
__device__ __forceinline__ void stamp_first_kv(WorkStamp* s) {
  if (s) s->first_kv_ns = global_clock_ns();
}
__device__ __forceinline__ void stamp_end(WorkStamp* s) {
  if (s) {
    s->sm_cycles = sm_clock_cycles() - s->sm_cycles;  // unsigned: right across one wrap of the low 32 bits
    s->end_ns = global_clock_ns();
  }
}

}  // namespace mlasim::kernels
