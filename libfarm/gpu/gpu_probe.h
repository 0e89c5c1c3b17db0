// The GPUs of this host, as its NVIDIA driver reports them. The driver library is loaded at
// run time (dlopen), never linked: the worker must start on hosts without one.
#pragma once

#include <string>
#include <vector>

#include "farm/v1/types.pb.h"

namespace farm {

// Each GPU the driver in `driver_library` sees: name, SM, memory and the driver's CUDA
// version. No library, a library without the entry points, or a failing cuInit (no GPU, no
// kernel module) all mean no GPUs: logged, not an error.
std::vector<farm::v1::GpuDevice> ProbeGpus(const std::string& driver_library = "libcuda.so.1");

}  // namespace farm
