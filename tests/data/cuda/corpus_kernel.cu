// The translation unit every case of tests/data/nvcc_corpus.txt compiles: half and bfloat16
// conversions (real projects build with and without -D__CUDA_NO_HALF_OPERATORS__ and friends,
// so only the conversion functions are used), templates, __CUDA_ARCH__-dependent code, and an
// extended lambda where the flags enable one. Clean under -Wall -Wextra and -Werror
// all-warnings, C++14 and later.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename T>
struct Convert;

template <>
struct Convert<__half> {
  __device__ static float ToFloat(__half v) { return __half2float(v); }
  __device__ static __half FromFloat(float v) { return __float2half(v); }
};

template <>
struct Convert<__nv_bfloat16> {
  __device__ static float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 FromFloat(float v) { return __float2bfloat16(v); }
};

template <typename T>
__global__ void ScaleKernel(T* data, float scale, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] = Convert<T>::FromFloat(Convert<T>::ToFloat(data[i]) * scale);
}

__global__ void ArchKernel(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  out[threadIdx.x] = __CUDA_ARCH__ + static_cast<int>(threadIdx.x);
#elif defined(__CUDA_ARCH__)
  out[threadIdx.x] = __CUDA_ARCH__;
#endif
}

#ifdef __CUDACC_EXTENDED_LAMBDA__
template <typename F>
__global__ void ApplyKernel(float* x, int n, F f) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] = f(x[i]);
}

void LaunchLambda(float* x, int n) {
  auto twice_plus_one = [] __device__(float v) { return v * 2.0f + 1.0f; };
  ApplyKernel<<<(n + 127) / 128, 128>>>(x, n, twice_plus_one);
}
#endif

void LaunchScale(__half* h, __nv_bfloat16* b, int n, float scale) {
  ScaleKernel<<<(n + 127) / 128, 128>>>(h, scale, n);
  ScaleKernel<<<(n + 127) / 128, 128>>>(b, scale, n);
}

void LaunchArch(int* out) { ArchKernel<<<1, 32>>>(out); }
