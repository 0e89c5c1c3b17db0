// Prints the kernels the library holds; links the library, runs no device code.
#include <iostream>

#include "cuda_kernels.h"

int main() {
  int count = 0;
  const char* const* names = cuda_kernels::KernelNames(&count);
  for (int i = 0; i < count; ++i) std::cout << names[i] << "\n";
  return 0;
}
