// Templates with CUB: a block-wide sum instantiated for two types and two block sizes.
#include <cub/block/block_reduce.cuh>

template <typename T, int kBlock>
__global__ void BlockSum(const T* in, T* out, int n) {
  using Reduce = cub::BlockReduce<T, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const int i = blockIdx.x * kBlock + threadIdx.x;
  T v = i < n ? in[i] : T(0);
  T sum = Reduce(storage).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

template __global__ void BlockSum<float, 128>(const float*, float*, int);
template __global__ void BlockSum<float, 256>(const float*, float*, int);
template __global__ void BlockSum<double, 128>(const double*, double*, int);
template __global__ void BlockSum<int, 256>(const int*, int*, int);

void LaunchSum(const float* in, float* out, int n) {
  BlockSum<float, 256><<<(n + 255) / 256, 256>>>(in, out, n);
}
