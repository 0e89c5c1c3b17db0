// alpha * x + y, templated on the element type and dispatched on the tensor's dtype. It
// computes in the type's accumulate type (double for double, float for float, half and
// bfloat16), as ATen's own kernels do: double tensors keep double precision.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <torch/types.h>

// A named namespace, not an anonymous one: nvcc gives kernels in anonymous namespaces a
// per-compile number in their names, so two builds of the same source would differ.
namespace wheelfarm_example {

template <typename scalar_t, typename acc_t = at::acc_type<scalar_t, /*is_cuda=*/true>>
__global__ void ScaleAddKernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ y,
                               scalar_t* __restrict__ out, acc_t alpha, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<scalar_t>(alpha * static_cast<acc_t>(x[i]) + static_cast<acc_t>(y[i]));
  }
}

}  // namespace wheelfarm_example

torch::Tensor scale_add_cuda(const torch::Tensor& x, const torch::Tensor& y, double alpha) {
  auto out = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 4096));
  auto stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "scale_add", [&] {
    using acc_t = at::acc_type<scalar_t, /*is_cuda=*/true>;
    wheelfarm_example::ScaleAddKernel<scalar_t><<<blocks, threads, 0, stream>>>(
        x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(),
        static_cast<acc_t>(alpha), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
