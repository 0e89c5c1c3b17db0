// Device code that differs per architecture, and a table of the archs being built.
#include <cstdio>

__device__ int CompiledArch() {
#if defined(__CUDA_ARCH__)
  return __CUDA_ARCH__;
#else
  return 0;
#endif
}

__global__ void Scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
#if __CUDA_ARCH__ >= 900
  x[i] = __fmaf_rn(x[i], a, 1.0f);  // Hopper and later take this branch
#elif __CUDA_ARCH__ >= 800
  x[i] = x[i] * a + 2.0f;
#else
  x[i] = x[i] * a;
#endif
  if (i == 0) x[0] += static_cast<float>(CompiledArch());
}

#ifdef __CUDA_ARCH_LIST__
static const int kArchList[] = {__CUDA_ARCH_LIST__};
int ArchCount() { return sizeof(kArchList) / sizeof(kArchList[0]); }
#endif

void LaunchScale(float* x, float a, int n) { Scale<<<(n + 127) / 128, 128>>>(x, a, n); }
