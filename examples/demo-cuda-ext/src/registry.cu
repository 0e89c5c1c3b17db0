// What the library holds, answerable without a GPU.
#include <cuda_runtime.h>

#include "demo.h"

extern "C" const char* demo_compiled_archs(void) { return DEMO_COMPILED_ARCHS; }

extern "C" const char* demo_kernel_names(void) {
  return "saxpy_kernel,block_sum_kernel,arch_probe_kernel";
}

extern "C" int demo_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}
