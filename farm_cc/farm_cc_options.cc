#include "farm_cc/farm_cc_options.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "libfarm/launcher/launcher_target.h"
#include "libfarm/process/environment.h"

namespace farm {

FarmCcOptions FarmCcOptionsFromEnvironment() {
  // The coordinator and build as farm-nvcc finds them: one build counts both launchers' calls.
  LauncherTarget target = LauncherTargetFromEnvironment();
  FarmCcOptions options;
  options.target = std::move(target.coordinator);
  options.build_id = std::move(target.build_id);
  options.disabled = GetEnv("FARM_CC_DISABLE") == "1";
  options.strict = GetEnv("FARM_CC_STRICT") == "1";
  options.local_job_priority = JobPriorityFromEnvironment();
  options.keep_scans = GetEnv("FARM_CC_KEEP_SCANS") != "0";
  options.read_includes = GetEnv("FARM_CC_SCAN") != "compiler";
  options.cache_dir = GetEnv("FARM_CC_CACHE_DIR");
  if (options.cache_dir.empty()) {
    const std::string xdg = GetEnv("XDG_CACHE_HOME");
    const std::string home = GetEnv("HOME");
    options.cache_dir = !xdg.empty()    ? absl::StrCat(xdg, "/wheelfarm/farm-cc")
                        : !home.empty() ? absl::StrCat(home, "/.cache/wheelfarm/farm-cc")
                                        : "/tmp/wheelfarm-farm-cc";
  }
  return options;
}

}  // namespace farm
