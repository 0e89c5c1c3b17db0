// farm-cc: a C/C++ compiler launcher (gcc, g++, clang, clang++) that runs each compile it can
// reproduce exactly on a farm worker, in a sandbox holding the build host's own toolchain and
// the files the compile reads, at their paths; anything else runs the local compiler, with the
// reason counted in the build. Used as CMake's C/CXX compiler launcher, as CC="farm-cc gcc", or
// masqueraded as gcc/g++/cc/c++/clang/clang++ (a link to it first on PATH).
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "farm_cc/compiler_locator.h"
#include "farm_cc/farm_cc_options.h"
#include "farm_cc/remote_or_local.h"
#include "libfarm/cc/base_dir.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"
#include "libfarm/units/byte_size.h"

int main(int argc, char** argv) {
  auto log = farm::ComponentLogger("farm-cc");
  log->set_pattern("farm-cc: %v");
  farm::SetLogLevel(farm::GetEnvOr("FARM_CC_LOG", "info"));
  auto call = farm::LocateCompiler(std::vector<std::string>(argv, argv + argc),
                                   farm::SelfExecutable(), farm::GetEnv("PATH"));
  if (!call.ok()) {
    std::cerr << call.status().message() << "\n";
    return 2;
  }
  farm::FarmCcOptions options = farm::FarmCcOptionsFromEnvironment();
  auto local_jobs = farm::LocalJobLimitsFromEnvironment();
  if (!local_jobs.ok()) {
    std::cerr << "farm-cc: " << local_jobs.status().message() << "\n";
    return 2;
  }
  options.local_jobs = *std::move(local_jobs);
  if (const std::string size = farm::GetEnv("FARM_CC_SCAN_CACHE_SIZE"); !size.empty()) {
    auto bytes = farm::ParseByteSize(size);
    if (!bytes.ok()) {
      std::cerr << "farm-cc: FARM_CC_SCAN_CACHE_SIZE: " << bytes.status().message()
                << ". Fix: set it to the bound of farm-cc's kept scans, or unset it for 1GiB\n";
      return 2;
    }
    options.scan_cache_bytes = *bytes;
  }
  if (const std::string scan = farm::GetEnv("FARM_CC_SCAN");
      !scan.empty() && scan != "includes" && scan != "compiler") {
    std::cerr << "farm-cc: FARM_CC_SCAN='" << scan << "' is neither 'includes' nor 'compiler'"
              << ". Fix: set it to 'compiler' for the compiler's -M scan on every call, or "
                 "unset it\n";
    return 2;
  }
  if (const std::string base_dir = farm::GetEnv("FARM_CC_BASEDIR"); !base_dir.empty()) {
    auto parsed = farm::cc::BaseDir::Create(base_dir);
    if (!parsed.ok()) {
      std::cerr << "farm-cc: " << parsed.status().message() << "\n";
      return 2;
    }
    options.base_dir = *std::move(parsed);
  }
  return farm::RemoteOrLocal(*call, options);
}
