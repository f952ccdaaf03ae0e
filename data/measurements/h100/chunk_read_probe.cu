// One-off probe behind chunk_read_2026-11-22.txt (docs/kernels.md): not part of the build.
// Streaming read of a buffer in chunks taken in a given order (random or sequential): what DRAM gives for a page
// layout. Each block reads whole chunks (blocks of 256 threads, 4 x 16 B per thread in flight).
#include <cstdio>
#include <cstdint>
#include <vector>
#include <random>
#include <algorithm>
#include <numeric>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(256) chunk_read(const uint4* data, const int* order, int chunks, int vecs, uint4* sink) {
  uint4 acc = make_uint4(0,0,0,0);
  for (int c = blockIdx.x; c < chunks; c += gridDim.x) {
    const uint4* p = data + (int64_t)order[c] * vecs;
    for (int i = threadIdx.x; i < vecs; i += 4 * 256) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) { int j = i + u * 256; v[u] = j < vecs ? p[j] : make_uint4(0,0,0,0); }
#pragma unroll
      for (int u = 0; u < 4; ++u) { acc.x ^= v[u].x; acc.y ^= v[u].y; acc.z ^= v[u].z; acc.w ^= v[u].w; }
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) sink[0] = acc;
}
int main() {
  const int64_t total = 302ll << 20;
  uint4 *data, *sink; void* flush; int* order;
  cudaMalloc(&data, total); cudaMemset(data, 1, total); cudaMalloc(&sink, 64); cudaMalloc(&flush, 100 << 20);
  cudaMalloc(&order, (total / 512) * 4);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int chunk : {576, 1152, 9216, 36864, 73728, 147456, 1 << 20}) {
    for (int rnd : {1, 0}) {
      const int chunks = total / chunk, vecs = chunk / 16;
      std::vector<int> h(chunks); std::iota(h.begin(), h.end(), 0);
      if (rnd) std::shuffle(h.begin(), h.end(), std::mt19937(7));
      cudaMemcpy(order, h.data(), chunks * 4, cudaMemcpyHostToDevice);
      for (int bps : {2, 4, 8}) {
        std::vector<float> t;
        for (int r = 0; r < 7; ++r) {
          cudaMemset(flush, r, 100 << 20);
          cudaEventRecord(a); chunk_read<<<132 * bps, 256>>>(data, order, chunks, vecs, sink); cudaEventRecord(b);
          cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("chunk %7d %s blocks/SM %d: %.3f TB/s\n", chunk, rnd ? "random    " : "sequential", bps, (double)chunks * chunk / (t[3] * 1e-3) / 1e12);
      }
    }
  }
  return 0;
}
