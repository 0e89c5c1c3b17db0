#include "farm_nvcc/farm_nvcc_config.h"

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libfarm/launcher/launcher_config.h"
#include "libfarm/launcher/launcher_target.h"

namespace farm {
namespace {

using Variable = ConfigVariable<FarmNvccConfig>;

// Every FARM_NVCC_* variable; the coordinator's and the job slots' come from the readers both
// launchers share.
const std::vector<Variable>& Variables() {
  static const std::vector<Variable> table = {
      BoolVariable("FARM_NVCC_DISABLE", &FarmNvccConfig::disabled,
                   "set it to 1 to always run plain nvcc, or unset it"),
      BoolVariable("FARM_NVCC_STRICT", &FarmNvccConfig::strict,
                   "set it to 1 to fail a call that would run plain nvcc, or unset it"),
      BoolVariable("FARM_NVCC_HOST_COMPILE_AHEAD", &FarmNvccConfig::host_compile_ahead,
                   "set it to 0 for the host compile to wait for the fat binary, or unset it"),
      BoolVariable("FARM_NVCC_HOST_COMPILE_ON_FARM", &FarmNvccConfig::host_compile_on_farm,
                   "set it to 0 to run the host compiles here, or unset it"),
      TextVariable("FARM_NVCC_LOG", &FarmNvccConfig::log_level),
      {"FARM_NVCC_LONG_UNIT_SECONDS",
       [](const char* name, const std::string& value, FarmNvccConfig& config) {
         double seconds = 0;
         if (!absl::SimpleAtod(value, &seconds) || !(seconds >= 0) || seconds > 86400) {
           return BadValue(name, value, "is not a number of seconds from 0 to 86400",
                           absl::StrCat("unset it (default ", kLongUnitSeconds,
                                        ") or give the seconds of device compile that make a "
                                        "unit long on your farm"));
         }
         config.long_unit_seconds = seconds;
         return absl::OkStatus();
       }},
      {"FARM_NVCC_COST_HINTS",
       [](const char* name, const std::string& value, FarmNvccConfig& config) {
         auto hints = CostHints::Parse(value);
         if (!hints.ok()) {
           return BadValue(name, value.substr(0, 200), hints.status().message(),
                           "unset it, or fix the entry it names");
         }
         config.cost_hints = *std::move(hints);
         return absl::OkStatus();
       }},
  };
  return table;
}

}  // namespace

absl::StatusOr<FarmNvccConfig> LoadFarmNvccConfig(const EnvironmentLookup& env) {
  FarmNvccConfig config;
  LauncherTarget target = LauncherTargetFrom(env);
  config.target = std::move(target.coordinator);
  config.build_id = std::move(target.build_id);
  if (absl::Status s = LoadConfigVariables(Variables(), env, config); !s.ok()) return s;
  auto local_jobs = LocalJobLimitsForThisHost(env);
  if (!local_jobs.ok()) return local_jobs.status();
  config.local_jobs = *std::move(local_jobs);
  return config;
}

}  // namespace farm
