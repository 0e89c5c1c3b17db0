// A compile error that only the sm_90 device compile sees.
__global__ void Broken(float* x) {
#if __CUDA_ARCH__ >= 900
  x[0] = undeclared_on_hopper;
#else
  x[0] = 1.0f;
#endif
}
