// Reports which SASS the GPU picked, and takes an arch-specific path: each per-arch compile
// sees a different __CUDA_ARCH__, so each arch's cubin holds different code.
#include <cuda_runtime.h>

#include "demo.h"

__global__ void arch_probe_kernel(int* out) {
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 900
  // Hopper and newer: read the cluster shape register, which older SMs do not have.
  unsigned int cluster_x = 0;
  asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cluster_x));
  out[0] = __CUDA_ARCH__ + static_cast<int>(cluster_x) * 0;
#else
  out[0] = __CUDA_ARCH__;
#endif
#endif
}

extern "C" int demo_probe_arch(int* out) {
  int* dout = nullptr;
  cudaError_t err = cudaMalloc(&dout, sizeof(int));
  if (err == cudaSuccess) {
    arch_probe_kernel<<<1, 1>>>(dout);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpy(out, dout, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dout);
  return static_cast<int>(err);
}
