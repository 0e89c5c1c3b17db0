// Which nvcc farm-nvcc stands in for. As CMake's compiler launcher it is called as
// `farm-nvcc /path/to/nvcc ARGS...`; as a drop-in compiler, `farm-nvcc ARGS...`, and the real
// nvcc is $CUDA_HOME/bin/nvcc, else the first nvcc on PATH that is not farm-nvcc itself.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

struct NvccInvocation {
  std::string nvcc;               // absolute path of the real nvcc
  std::vector<std::string> args;  // what follows it
};

// `argv` is farm-nvcc's own argv, argv[0] included. `self` is farm-nvcc's executable
// (/proc/self/exe), never chosen as the real nvcc.
absl::StatusOr<NvccInvocation> LocateNvcc(const std::vector<std::string>& argv,
                                          const std::string& self, const std::string& cuda_home,
                                          const std::string& path_env);

}  // namespace farm
