#include "cuda_kernels.h"

namespace {
__global__ void SaxpyKernel(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = a * x[i] + y[i];
  }
}
}  // namespace

namespace cuda_kernels {
void Saxpy(float a, const float* x, float* y, int n) {
  SaxpyKernel<<<(n + 255) / 256, 256>>>(a, x, y, n);
}
}  // namespace cuda_kernels
