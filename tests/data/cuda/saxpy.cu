// A plain kernel: PTX-only, sm_90a, debug and compressed builds compile it.
__global__ void Saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

void LaunchSaxpy(float a, const float* x, float* y, int n) {
  Saxpy<<<(n + 255) / 256, 256>>>(a, x, y, n);
}
