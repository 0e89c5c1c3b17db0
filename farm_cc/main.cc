// farm-cc: a C/C++ compiler launcher (gcc, g++, clang, clang++) that runs each compile it can
// reproduce exactly on a farm worker, in a sandbox holding the build host's own toolchain and
// the files the compile reads, at their paths; anything else runs the local compiler, with the
// reason counted in the build. Used as CMake's C/CXX compiler launcher, as CC="farm-cc gcc", or
// masqueraded as gcc/g++/cc/c++/clang/clang++ (a link to it first on PATH).
#include <stdlib.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "farm_cc/compiler_locator.h"
#include "farm_cc/farm_cc_config.h"
#include "farm_cc/remote_or_local.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"

int main(int argc, char** argv) {
  auto log = farm::ComponentLogger("farm-cc");
  log->set_pattern("farm-cc: %v");
  // Settings first: a value farm-cc cannot take fails every call, before anything runs.
  auto config = farm::LoadFarmCcConfig(farm::GetEnv);
  if (!config.ok()) {
    std::cerr << "farm-cc: " << config.status().message() << "\n";
    return 2;
  }
  farm::SetLogLevel(config->log_level);
  // Set: a farm-cc runs this process's compiler (compiler_locator.h).
  const std::string running = farm::GetEnv(farm::kRunningCompilersVariable);
  auto call =
      farm::LocateCompiler(std::vector<std::string>(argv, argv + argc), farm::SelfExecutable(),
                           farm::GetEnv("PATH"), absl::StrSplit(running, ':', absl::SkipEmpty()));
  if (!call.ok()) {
    std::cerr << call.status().message() << "\n";
    return 2;
  }
  // Every child, the compiler and what it runs, skips this compiler if it finds farm-cc again.
  const std::string now_running =
      running.empty() ? call->compiler : absl::StrCat(running, ":", call->compiler);
  ::setenv(farm::kRunningCompilersVariable, now_running.c_str(), 1);
  if (!running.empty()) return farm::ExecCompiler(*call);
  return farm::RemoteOrLocal(*call, *config);
}
