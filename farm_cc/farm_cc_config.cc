#include "farm_cc/farm_cc_config.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libfarm/launcher/launcher_config.h"
#include "libfarm/launcher/launcher_target.h"
#include "libfarm/units/byte_size.h"

namespace farm {
namespace {

using Variable = ConfigVariable<FarmCcConfig>;

// Every FARM_CC_* variable and the job priority farm-nvcc hands over; the coordinator's and
// the job slots' come from the readers both launchers share.
const std::vector<Variable>& Variables() {
  static const std::vector<Variable> table = {
      BoolVariable("FARM_CC_DISABLE", &FarmCcConfig::disabled,
                   "set it to 1 to always compile on this host, or unset it"),
      BoolVariable("FARM_CC_STRICT", &FarmCcConfig::strict,
                   "set it to 1 to fail a compile that would run on this host, or unset it"),
      BoolVariable("FARM_CC_KEEP_SCANS", &FarmCcConfig::keep_scans,
                   "set it to 0 to keep no dependency scan, or unset it"),
      TextVariable("FARM_CC_CACHE_DIR", &FarmCcConfig::cache_dir),
      TextVariable("FARM_CC_LOG", &FarmCcConfig::log_level),
      {"FARM_CC_SCAN",
       [](const char* name, const std::string& value, FarmCcConfig& config) {
         if (value != "includes" && value != "compiler") {
           return BadValue(name, value, "is neither 'includes' nor 'compiler'",
                           "set it to 'compiler' for the compiler's -M scan on every call, or "
                           "unset it");
         }
         config.read_includes = value == "includes";
         return absl::OkStatus();
       }},
      {"FARM_CC_SCAN_CACHE_SIZE",
       [](const char* name, const std::string& value, FarmCcConfig& config) {
         auto bytes = ParseByteSize(value);
         if (!bytes.ok()) {
           return BadValue(name, value,
                           absl::StrCat("is not a size (", bytes.status().message(), ")"),
                           "set it to the bound of farm-cc's kept scans, or unset it for 1GiB");
         }
         config.scan_cache_bytes = *bytes;
         return absl::OkStatus();
       }},
      {"FARM_CC_BASEDIR",
       [](const char*, const std::string& value, FarmCcConfig& config) {
         // Its refusal names the variable, the path and the fix.
         auto base_dir = cc::BaseDir::Create(value);
         if (!base_dir.ok()) return base_dir.status();
         config.base_dir = *std::move(base_dir);
         return absl::OkStatus();
       }},
      {kLocalJobPriorityVariable,
       [](const char* name, const std::string& value, FarmCcConfig& config) {
         const std::optional<JobPriority> priority = JobPriorityNamed(value);
         if (!priority) {
           return BadValue(name, value, "is not opening, closing or long-unit",
                           "unset it: farm-nvcc sets it for the host compiles it hands over");
         }
         config.local_job_priority = *priority;
         return absl::OkStatus();
       }},
  };
  return table;
}

// $XDG_CACHE_HOME/wheelfarm/farm-cc, else ~/.cache/wheelfarm/farm-cc.
std::string DefaultCacheDir(const EnvironmentLookup& env) {
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    return absl::StrCat(xdg, "/wheelfarm/farm-cc");
  }
  if (const std::string home = env("HOME"); !home.empty()) {
    return absl::StrCat(home, "/.cache/wheelfarm/farm-cc");
  }
  return "/tmp/wheelfarm-farm-cc";
}

}  // namespace

absl::StatusOr<FarmCcConfig> LoadFarmCcConfig(const EnvironmentLookup& env) {
  FarmCcConfig config;
  // The coordinator and build as farm-nvcc finds them: one build counts both launchers' calls.
  LauncherTarget target = LauncherTargetFrom(env);
  config.target = std::move(target.coordinator);
  config.build_id = std::move(target.build_id);
  config.cache_dir = DefaultCacheDir(env);
  if (absl::Status s = LoadConfigVariables(Variables(), env, config); !s.ok()) return s;
  auto local_jobs = LocalJobLimitsForThisHost(env);
  if (!local_jobs.ok()) return local_jobs.status();
  config.local_jobs = *std::move(local_jobs);
  return config;
}

}  // namespace farm
