// -rdc pair: calls a __device__ function defined in rdc_callee.cu (device link needed).
extern __device__ float Square(float v);

__global__ void SquareAll(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = Square(x[i]);
}

void LaunchSquareAll(float* x, int n) { SquareAll<<<(n + 63) / 64, 64>>>(x, n); }
