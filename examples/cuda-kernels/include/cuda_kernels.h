// The library's host API: each call launches one kernel on the current device.
#pragma once

#include <cstddef>

namespace cuda_kernels {

void Saxpy(float a, const float* x, float* y, int n);
float* BlockSums(const float* in, float* out, int n);
void InclusiveScan(const int* in, int* out, int n, void* temp, size_t temp_bytes);
void Transpose(const float* in, float* out, int rows, int cols);
void Histogram(const unsigned char* in, unsigned int* bins, int n);
void Softmax(const float* in, float* out, int rows, int cols);
// Names of the kernels this library holds, for tools and tests.
const char* const* KernelNames(int* count);

}  // namespace cuda_kernels
