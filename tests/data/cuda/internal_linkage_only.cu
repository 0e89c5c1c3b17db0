// A translation unit that defines no function or variable with external linkage: its kernel
// lives in an anonymous namespace and registers itself through a static object, as PyTorch's
// kernel files do (REGISTER_DISPATCH). cudafe++ then ends nvcc's module id with its own process
// id, so two plain nvcc runs of the same call write different device code (farm_nvcc_test).
using ScaleFn = void (*)(float*, float, int);
ScaleFn* ScaleRegistry();  // defined by whoever links this in

namespace {

__global__ void ScaleKernel(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

void LaunchScale(float* x, float a, int n) { ScaleKernel<<<(n + 127) / 128, 128>>>(x, a, n); }

struct Registration {
  Registration() { *ScaleRegistry() = &LaunchScale; }
};
const Registration registration;

}  // namespace
