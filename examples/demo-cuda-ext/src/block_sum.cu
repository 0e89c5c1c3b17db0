// A reduction with CUB's block-wide primitive: one partial sum per block, then atomics.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include "demo.h"

constexpr int kThreads = 256;

__global__ void block_sum_kernel(int n, const float* x, float* out) {
  using BlockReduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int i = blockIdx.x * kThreads + threadIdx.x;
  const float v = i < n ? x[i] : 0.0f;
  const float block_total = BlockReduce(temp).Sum(v);
  if (threadIdx.x == 0) atomicAdd(out, block_total);
}

extern "C" int demo_sum(int n, const float* x, float* out) {
  float *dx = nullptr, *dout = nullptr;
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  cudaError_t err = cudaMalloc(&dx, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&dout, sizeof(float));
  if (err == cudaSuccess) err = cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  if (err == cudaSuccess) err = cudaMemset(dout, 0, sizeof(float));
  if (err == cudaSuccess) {
    block_sum_kernel<<<(n + kThreads - 1) / kThreads, kThreads>>>(n, dx, dout);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpy(out, dout, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
  return static_cast<int>(err);
}
