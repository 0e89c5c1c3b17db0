// Which farm a launcher's calls go to and which build they count in, read alike by farm-nvcc
// and farm-cc so that one build counts both launchers' calls.
#pragma once

#include <string>

#include "libfarm/client/coordinator_target.h"
#include "libfarm/process/environment.h"

namespace farm {

struct LauncherTarget {
  // FARM_COORDINATOR (empty: the local farm, else 127.0.0.1:7420), FARM_DIR (that local
  // farm's data dir; empty: the current one), FARM_TOKEN_FILE (empty: the local farm's token),
  // FARM_TLS_CA, FARM_TLS_CERT, FARM_TLS_KEY (empty: the local farm's).
  CoordinatorChoice coordinator;
  // FARM_BUILD_ID: the build the calls count in (a wheel build sets it). Default: one id per
  // working directory, so one CMake build tree is one build.
  std::string build_id;
};

// As `env` has them (GetEnv in a launcher); nothing in them can be refused before the
// coordinator is dialled.
LauncherTarget LauncherTargetFrom(const EnvironmentLookup& env);

// "nvcc-<dir name>-<8 hex of the path's sha256>" (both launchers: the name predates farm-cc).
std::string DefaultBuildId(const std::string& working_dir);

}  // namespace farm
