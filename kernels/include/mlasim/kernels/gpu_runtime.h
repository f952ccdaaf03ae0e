#pragma once
// The GPU runtime under HIP's names. On AMD this is hip/hip_runtime.h itself; on NVIDIA the few HIP names the
// kernels and the host API use map onto the CUDA runtime (Debian's HIP-on-NVIDIA headers do not build against
// CUDA 13, so they are not used).
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define MLASIM_GPU_AMD 1
#else
#include <cuda_runtime.h>
#define MLASIM_GPU_NVIDIA 1

using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipDeviceProp_t = cudaDeviceProp;
inline constexpr hipError_t hipSuccess = cudaSuccess;
inline constexpr auto hipMemcpyHostToDevice = cudaMemcpyHostToDevice;
inline constexpr auto hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
inline constexpr auto hipFuncAttributeMaxDynamicSharedMemorySize = cudaFuncAttributeMaxDynamicSharedMemorySize;

inline hipError_t hipGetDeviceCount(int* n) { return cudaGetDeviceCount(n); }
inline hipError_t hipGetDevice(int* d) { return cudaGetDevice(d); }
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) { return cudaGetDeviceProperties(p, d); }
inline hipError_t hipDriverGetVersion(int* v) { return cudaDriverGetVersion(v); }
inline hipError_t hipMalloc(void** p, size_t n) { return cudaMalloc(p, n); }
inline hipError_t hipFree(void* p) { return cudaFree(p); }
inline hipError_t hipMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) { return cudaMemcpy(d, s, n, k); }
inline hipError_t hipMemset(void* p, int v, size_t n) { return cudaMemset(p, v, n); }
inline hipError_t hipMemsetAsync(void* p, int v, size_t n, hipStream_t s) { return cudaMemsetAsync(p, v, n, s); }
inline hipError_t hipDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline hipError_t hipGetLastError() { return cudaGetLastError(); }
inline const char* hipGetErrorString(hipError_t e) { return cudaGetErrorString(e); }
inline hipError_t hipEventCreate(hipEvent_t* e) { return cudaEventCreate(e); }
inline hipError_t hipEventDestroy(hipEvent_t e) { return cudaEventDestroy(e); }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s = nullptr) { return cudaEventRecord(e, s); }
inline hipError_t hipEventSynchronize(hipEvent_t e) { return cudaEventSynchronize(e); }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) { return cudaEventElapsedTime(ms, a, b); }
inline hipError_t hipFuncSetAttribute(const void* f, cudaFuncAttribute a, int v) {
  return cudaFuncSetAttribute(f, a, v);
}
using hipDeviceAttribute_t = cudaDeviceAttr;
inline constexpr auto hipDeviceAttributeClockRate = cudaDevAttrClockRate;
inline constexpr auto hipDeviceAttributeMemoryClockRate = cudaDevAttrMemoryClockRate;
inline constexpr auto hipDeviceAttributeMultiprocessorCount = cudaDevAttrMultiProcessorCount;
inline hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t a, int d) {
  return cudaDeviceGetAttribute(v, a, d);
}
#endif
