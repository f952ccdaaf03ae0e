#pragma once
// The one output epilogue of the decode kernels. A work that covers the whole KV range of its tile writes the
// final bf16 output; a split work writes fp32 partial rows at partial_qo_loc and each row's LSE, which the reduce
// merges. Layouts: output and partials [rows, heads, 512], LSE [rows, heads].
#include <cstdint>

#include "device_primitives.cuh"
#include "mla_params.h"
#include "mla_work.cuh"
#include "online_softmax.cuh"

namespace mlasim::kernels {

// One output row of a work that is not split: values rounded to bf16.
struct FinalOutputRow {
  uint16_t* dst;
  __device__ __forceinline__ void store2(int dim, float x0, float x1) const {
    *reinterpret_cast<uint32_t*>(dst + dim) = dev::pack_bf16x2(x0, x1);
  }
  __device__ __forceinline__ void store4(int dim, float x0, float x1, float x2, float x3) const {
    *reinterpret_cast<uint2*>(dst + dim) = make_uint2(dev::pack_bf16x2(x0, x1), dev::pack_bf16x2(x2, x3));
  }
};

// One partial row of a split work: values kept in fp32 for the reduce.
struct PartialOutputRow {
  float* dst;
  __device__ __forceinline__ void store2(int dim, float x0, float x1) const {
    *reinterpret_cast<float2*>(dst + dim) = make_float2(x0, x1);
  }
  __device__ __forceinline__ void store4(int dim, float x0, float x1, float x2, float x3) const {
    *reinterpret_cast<float4*>(dst + dim) = make_float4(x0, x1, x2, x3);
  }
};

// Calls write(row) once with where packed row (qrow, head) of the work's tile goes, from value dim dim0 on: a
// FinalOutputRow or a PartialOutputRow. The choice is made once per row, so the stores themselves are plain.
template <class Write>
__device__ __forceinline__ void with_output_row(const DecodeParams& p, const WorkRow& w, int qrow, int head, int dim0,
                                                Write&& write) {
  if (w.partial_qo_loc < 0)
    write(FinalOutputRow{p.out + (static_cast<int64_t>(w.qo_start + qrow) * p.heads + head) * kVDim + dim0});
  else
    write(PartialOutputRow{p.partial_out + (static_cast<int64_t>(w.partial_qo_loc + qrow) * p.heads + head) * kVDim +
                           dim0});
}

// The LSE of packed row (qrow, head) of a split work, from the row's softmax maximum (log2 units) and sum.
__device__ __forceinline__ void store_partial_lse(const DecodeParams& p, const WorkRow& w, int qrow, int head,
                                                  float m_log2, float l) {
  p.partial_lse[static_cast<int64_t>(w.partial_qo_loc + qrow) * p.heads + head] = log_sum_exp(m_log2, l);
}

}  // namespace mlasim::kernels
