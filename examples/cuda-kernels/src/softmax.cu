// Row-wise softmax: one block per row, CUB block reductions for max and sum.
#include <cub/block/block_reduce.cuh>

#include "cuda_kernels.h"

namespace {
template <int kBlock>
__global__ void SoftmaxKernel(const float* in, float* out, int cols) {
  using Reduce = cub::BlockReduce<float, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ float row_max, row_sum;
  const float* row = in + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += kBlock) m = fmaxf(m, row[c]);
  m = Reduce(storage).Reduce(m, cuda::maximum<float>{});
  if (threadIdx.x == 0) row_max = m;
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += kBlock) s += __expf(row[c] - row_max);
  __syncthreads();
  s = Reduce(storage).Sum(s);
  if (threadIdx.x == 0) row_sum = s;
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += kBlock) {
    out[blockIdx.x * cols + c] = __expf(row[c] - row_max) / row_sum;
  }
}
}  // namespace

namespace cuda_kernels {
void Softmax(const float* in, float* out, int rows, int cols) {
  if (cols <= 256) {
    SoftmaxKernel<128><<<rows, 128>>>(in, out, cols);
  } else {
    SoftmaxKernel<512><<<rows, 512>>>(in, out, cols);
  }
}

const char* const* KernelNames(int* count) {
  static const char* const kNames[] = {"saxpy", "block_sum", "inclusive_scan",
                                       "transpose", "histogram", "softmax"};
  *count = sizeof(kNames) / sizeof(kNames[0]);
  return kNames;
}
}  // namespace cuda_kernels
