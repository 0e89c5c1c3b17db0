// Counts int32 values into `bins` buckets with shared-memory atomics; values outside
// [0, bins) are ignored.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <torch/types.h>

__global__ void HistogramKernel(const int* __restrict__ values, int64_t n,
                                int* __restrict__ counts, int bins) {
  extern __shared__ int local[];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int v = values[i];
    if (v >= 0 && v < bins) atomicAdd(&local[v], 1);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) {
    if (local[b] != 0) atomicAdd(&counts[b], local[b]);
  }
}

torch::Tensor histogram_cuda(const torch::Tensor& values, int64_t bins) {
  TORCH_CHECK(bins <= 8192, "histogram: at most 8192 bins (shared memory)");
  auto counts = torch::zeros({bins}, values.options());
  const int64_t n = values.numel();
  if (n == 0) return counts;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 1024));
  HistogramKernel<<<blocks, threads, bins * sizeof(int), at::cuda::getCurrentCUDAStream()>>>(
      values.data_ptr<int>(), n, counts.data_ptr<int>(), static_cast<int>(bins));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return counts;
}
