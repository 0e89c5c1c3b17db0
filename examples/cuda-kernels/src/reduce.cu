// Block-wide sums with CUB, instantiated for several block sizes.
#include <cub/block/block_reduce.cuh>

#include "cuda_kernels.h"

namespace {
template <typename T, int kBlock>
__global__ void BlockSum(const T* in, T* out, int n) {
  using Reduce = cub::BlockReduce<T, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const int i = blockIdx.x * kBlock + threadIdx.x;
  const T sum = Reduce(storage).Sum(i < n ? in[i] : T(0));
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
template __global__ void BlockSum<float, 128>(const float*, float*, int);
template __global__ void BlockSum<double, 256>(const double*, double*, int);
template __global__ void BlockSum<int, 512>(const int*, int*, int);
}  // namespace

namespace cuda_kernels {
float* BlockSums(const float* in, float* out, int n) {
  BlockSum<float, 256><<<(n + 255) / 256, 256>>>(in, out, n);
  return out;
}
}  // namespace cuda_kernels
