// farm-nvcc: nvcc with its per-arch device compiles run on the farm. Used as CMake's
// CUDA compiler launcher or in nvcc's place; anything it cannot split, or any farm trouble,
// runs plain nvcc instead, so a build never fails because of the farm — unless
// FARM_NVCC_STRICT=1 asks for exactly that. Each call's outcome is reported to the build.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "farm_nvcc/farm_nvcc_options.h"
#include "farm_nvcc/nvcc_locator.h"
#include "farm_nvcc/split_or_fallback.h"
#include "libfarm/jobs/local_job_limits.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"

int main(int argc, char** argv) {
  auto log = farm::ComponentLogger("farm-nvcc");
  log->set_pattern("farm-nvcc: %v");
  farm::SetLogLevel(farm::GetEnvOr("FARM_NVCC_LOG", "info"));
  const std::vector<std::string> args(argv, argv + argc);
  auto call = farm::LocateNvcc(args, farm::SelfExecutable(), farm::GetEnv("CUDA_HOME"),
                               farm::GetEnv("PATH"));
  if (!call.ok()) {
    std::cerr << call.status().message() << "\n";
    return 2;
  }
  farm::FarmNvccOptions options = farm::FarmNvccOptionsFromEnvironment();
  auto local_jobs = farm::LocalJobLimitsFromEnvironment();
  if (!local_jobs.ok()) {
    std::cerr << "farm-nvcc: " << local_jobs.status().message() << "\n";
    return 2;
  }
  options.local_jobs = *std::move(local_jobs);
  auto long_unit_seconds = farm::LongUnitSecondsFromEnvironment();
  if (!long_unit_seconds.ok()) {
    std::cerr << "farm-nvcc: " << long_unit_seconds.status().message() << "\n";
    return 2;
  }
  options.long_unit_seconds = *long_unit_seconds;
  // The host compile through farm-cc, when it is installed beside this binary.
  const std::string farm_cc =
      (std::filesystem::path(farm::SelfExecutable()).parent_path() / "farm-cc").string();
  if (farm::GetEnv("FARM_NVCC_HOST_COMPILE_ON_FARM") != "0" && access(farm_cc.c_str(), X_OK) == 0) {
    options.farm_cc = farm_cc;
  }
  return farm::SplitOrFallback(*call, options);
}
