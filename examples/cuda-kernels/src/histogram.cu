// 256-bin histogram with block-private bins in shared memory.
#include "cuda_kernels.h"

namespace {
__global__ void HistogramKernel(const unsigned char* in, unsigned int* bins, int n) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local[in[i]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
}  // namespace

namespace cuda_kernels {
void Histogram(const unsigned char* in, unsigned int* bins, int n) {
  HistogramKernel<<<64, 256>>>(in, bins, n);
}
}  // namespace cuda_kernels
