#include <torch/extension.h>

torch::Tensor scale_add_cuda(const torch::Tensor& x, const torch::Tensor& y, double alpha);
torch::Tensor histogram_cuda(const torch::Tensor& values, int64_t bins);

namespace {

torch::Tensor scale_add(const torch::Tensor& x, const torch::Tensor& y, double alpha) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "scale_add: tensors must be on a CUDA device");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add: shapes differ");
  TORCH_CHECK(x.scalar_type() == y.scalar_type(), "scale_add: dtypes differ");
  return scale_add_cuda(x.contiguous(), y.contiguous(), alpha);
}

torch::Tensor histogram(const torch::Tensor& values, int64_t bins) {
  TORCH_CHECK(values.is_cuda(), "histogram: values must be on a CUDA device");
  TORCH_CHECK(values.scalar_type() == torch::kInt32, "histogram: values must be int32");
  TORCH_CHECK(bins > 0, "histogram: bins must be positive");
  return histogram_cuda(values.contiguous(), bins);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale_add", &scale_add, "alpha * x + y (float, double, half, bfloat16)");
  m.def("histogram", &histogram, "counts of int32 values in [0, bins)");
}
