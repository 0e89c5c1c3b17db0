#include "libfarm/gpu/gpu_probe.h"

#include <dlfcn.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/logging/logger.h"

namespace farm {
namespace {

// The few driver API entry points used, declared here so nothing links libcuda. CUresult is
// an int (0 = CUDA_SUCCESS), CUdevice an int handle.
using CuInit = int (*)(unsigned int flags);
using CuDriverGetVersion = int (*)(int* version);
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDeviceGetName = int (*)(char* name, int length, int device);
using CuDeviceGetAttribute = int (*)(int* value, int attribute, int device);
using CuDeviceTotalMem = int (*)(size_t* bytes, int device);

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

template <typename Fn>
Fn Symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::vector<farm::v1::GpuDevice> ProbeGpus(const std::string& driver_library) {
  auto log = ComponentLogger("gpu");
  std::vector<farm::v1::GpuDevice> gpus;
  void* library = dlopen(driver_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    log->info("no NVIDIA driver ({}: {}): no GPUs; declare them with --gpu if there are",
              driver_library, why == nullptr ? "not found" : why);
    return gpus;
  }
  // Closing it again is what the driver expects of a process that is done with it; the
  // worker never calls it after this.
  absl::Cleanup close = [library] { dlclose(library); };
  auto init = Symbol<CuInit>(library, "cuInit");
  auto driver_version = Symbol<CuDriverGetVersion>(library, "cuDriverGetVersion");
  auto count = Symbol<CuDeviceGetCount>(library, "cuDeviceGetCount");
  auto get = Symbol<CuDeviceGet>(library, "cuDeviceGet");
  auto name = Symbol<CuDeviceGetName>(library, "cuDeviceGetName");
  auto attribute = Symbol<CuDeviceGetAttribute>(library, "cuDeviceGetAttribute");
  auto total_mem = Symbol<CuDeviceTotalMem>(library, "cuDeviceTotalMem_v2");
  if (init == nullptr || driver_version == nullptr || count == nullptr || get == nullptr ||
      name == nullptr || attribute == nullptr || total_mem == nullptr) {
    log->warn("{} lacks the CUDA driver API entry points: no GPUs detected", driver_library);
    return gpus;
  }
  if (int rc = init(0); rc != 0) {
    log->info("cuInit failed (CUresult {}): no usable GPU here", rc);
    return gpus;
  }
  int version = 0;
  std::string cuda_version;
  if (driver_version(&version) == 0 && version > 0) {
    cuda_version = absl::StrCat(version / 1000, ".", (version % 1000) / 10);
  }
  int n = 0;
  if (int rc = count(&n); rc != 0) {
    log->info("cuDeviceGetCount failed (CUresult {}): no GPUs", rc);
    return gpus;
  }
  for (int ordinal = 0; ordinal < n && ordinal < kMaxWorkerGpus; ++ordinal) {
    int device = 0, major = 0, minor = 0;
    char text[kMaxGpuNameBytes + 1] = {};
    size_t bytes = 0;
    if (get(&device, ordinal) != 0 || attribute(&major, kComputeCapabilityMajor, device) != 0 ||
        attribute(&minor, kComputeCapabilityMinor, device) != 0) {
      log->warn("GPU {}: the driver does not say its compute capability; skipped", ordinal);
      continue;
    }
    farm::v1::GpuDevice gpu;
    gpu.set_sm(SmOfComputeCapability(major, minor));
    // A GPU newer than this farm's arch table: nothing here could target it by name.
    if (!GpuSm(gpu.sm()).ok()) {
      log->warn("GPU {}: {} is not in this farm's arch table; skipped", ordinal, gpu.sm());
      continue;
    }
    if (name(text, static_cast<int>(kMaxGpuNameBytes), device) == 0) {
      std::string printable;
      for (const char* c = text; *c != '\0'; ++c) printable += (*c >= 0x20 && *c < 0x7f) ? *c : '?';
      gpu.set_name(printable);
    }
    if (total_mem(&bytes, device) == 0) gpu.set_memory_bytes(bytes);
    gpu.set_driver_cuda_version(cuda_version);
    log->info("GPU {}: {} ({}, {} bytes, driver CUDA {})", ordinal, gpu.name(), gpu.sm(),
              gpu.memory_bytes(), cuda_version);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace farm
