#include "farm_nvcc/farm_nvcc_options.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libfarm/launcher/launcher_target.h"
#include "libfarm/process/environment.h"

namespace farm {

absl::StatusOr<double> LongUnitSecondsFromEnvironment() {
  const std::string text = GetEnv("FARM_NVCC_LONG_UNIT_SECONDS");
  if (text.empty()) return kLongUnitSeconds;
  double seconds = 0;
  if (!absl::SimpleAtod(text, &seconds) || !(seconds >= 0) || seconds > 86400) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FARM_NVCC_LONG_UNIT_SECONDS='", text,
        "' is not a number of seconds from 0 to 86400. Fix: unset it (default ", kLongUnitSeconds,
        ") or give the seconds of device compile that make a unit "
        "long on your farm"));
  }
  return seconds;
}

FarmNvccOptions FarmNvccOptionsFromEnvironment() {
  FarmNvccOptions options;
  LauncherTarget target = LauncherTargetFromEnvironment();
  options.target = std::move(target.coordinator);
  options.build_id = std::move(target.build_id);
  options.disabled = GetEnv("FARM_NVCC_DISABLE") == "1";
  options.strict = GetEnv("FARM_NVCC_STRICT") == "1";
  options.host_compile_ahead = GetEnv("FARM_NVCC_HOST_COMPILE_AHEAD") != "0";
  return options;
}

}  // namespace farm
