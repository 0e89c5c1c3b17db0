#include "farm_nvcc/farm_nvcc_options.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/process/environment.h"

namespace farm {

std::string DefaultBuildId(const std::string& working_dir) {
  const std::string name = std::filesystem::path(working_dir).filename().string();
  return absl::StrCat("nvcc-", name.empty() ? "root" : name, "-",
                      DigestOfBytes(working_dir).hash().substr(0, 8));
}

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
  options.target.coordinator = GetEnv("FARM_COORDINATOR");
  options.target.farm_dir = GetEnv("FARM_DIR");
  options.target.token_file = GetEnv("FARM_TOKEN_FILE");
  options.target.tls = ClientTlsFilesFromEnvironment();
  options.build_id = GetEnv("FARM_BUILD_ID");
  if (options.build_id.empty()) {
    std::error_code ec;
    options.build_id = DefaultBuildId(std::filesystem::current_path(ec).string());
  }
  options.disabled = GetEnv("FARM_NVCC_DISABLE") == "1";
  options.strict = GetEnv("FARM_NVCC_STRICT") == "1";
  options.host_compile_ahead = GetEnv("FARM_NVCC_HOST_COMPILE_AHEAD") != "0";
  return options;
}

}  // namespace farm
