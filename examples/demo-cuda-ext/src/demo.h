// The C interface demo_cuda_ext/__init__.py calls through ctypes.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// Comma-separated SMs this library was compiled for ("75,90"), known at build time.
const char* demo_compiled_archs(void);
// Comma-separated kernel names.
const char* demo_kernel_names(void);
// CUDA devices visible (0 without a GPU or driver; never fails).
int demo_device_count(void);
// y = a*x + y on the GPU; returns a cudaError_t (0 on success).
int demo_saxpy(int n, float a, const float* x, float* y);
// Sum of x on the GPU into *out; returns a cudaError_t.
int demo_sum(int n, const float* x, float* out);
// __CUDA_ARCH__ of the code the GPU ran (e.g. 900) into *out; returns a cudaError_t.
int demo_probe_arch(int* out);

#ifdef __cplusplus
}
#endif
