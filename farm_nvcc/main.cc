// farm-nvcc: nvcc with its per-arch device compiles run on the farm. Used as CMake's
// CUDA compiler launcher or in nvcc's place; anything it cannot split, or any farm trouble,
// runs plain nvcc instead, so a build never fails because of the farm — unless
// FARM_NVCC_STRICT=1 asks for exactly that. Each call's outcome is reported to the build.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "farm_nvcc/farm_nvcc_config.h"
#include "farm_nvcc/nvcc_locator.h"
#include "farm_nvcc/split_or_fallback.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"

int main(int argc, char** argv) {
  auto log = farm::ComponentLogger("farm-nvcc");
  log->set_pattern("farm-nvcc: %v");
  // Settings first: a value farm-nvcc cannot take fails every call, before anything runs.
  auto config = farm::LoadFarmNvccConfig(farm::GetEnv);
  if (!config.ok()) {
    std::cerr << "farm-nvcc: " << config.status().message() << "\n";
    return 2;
  }
  farm::SetLogLevel(config->log_level);
  const std::vector<std::string> args(argv, argv + argc);
  auto call = farm::LocateNvcc(args, farm::SelfExecutable(), farm::GetEnv("CUDA_HOME"),
                               farm::GetEnv("PATH"));
  if (!call.ok()) {
    std::cerr << call.status().message() << "\n";
    return 2;
  }
  // The host compile through farm-cc, when it is installed beside this binary.
  const std::string farm_cc =
      (std::filesystem::path(farm::SelfExecutable()).parent_path() / "farm-cc").string();
  if (config->host_compile_on_farm && access(farm_cc.c_str(), X_OK) == 0) {
    config->farm_cc = farm_cc;
  }
  return farm::SplitOrFallback(*call, *config);
}
