// A stand-in for libcuda.so.1 with the driver API entry points the probe calls: two GPUs (an
// sm_90 and an sm_121) under a CUDA 13.0 driver. FAKE_CUDA_INIT_RESULT=N makes cuInit return N,
// the way a host with the library but no GPU or kernel module answers.
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace {

struct FakeGpu {
  const char* name;
  int major, minor;
  size_t bytes;
};

constexpr FakeGpu kGpus[] = {{"Fake H100 80GB HBM3", 9, 0, size_t{80} << 30},
                             {"Fake GB10", 12, 1, size_t{128} << 30}};

}  // namespace

extern "C" {

int cuInit(unsigned int) {
  const char* rc = std::getenv("FAKE_CUDA_INIT_RESULT");
  return rc == nullptr ? 0 : std::atoi(rc);
}

int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}

int cuDeviceGetCount(int* count) {
  *count = 2;
  return 0;
}

int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal > 1) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}

int cuDeviceGetName(char* name, int length, int device) {
  std::strncpy(name, kGpus[device].name, static_cast<size_t>(length));
  name[length - 1] = '\0';
  return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute == 75)
    *value = kGpus[device].major;
  else if (attribute == 76)
    *value = kGpus[device].minor;
  else
    return 1;  // CUDA_ERROR_INVALID_VALUE
  return 0;
}

int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  *bytes = kGpus[device].bytes;
  return 0;
}

}  // extern "C"
