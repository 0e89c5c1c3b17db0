#include "libfarm/launcher/launcher_target.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/tls/client_tls.h"

namespace farm {

std::string DefaultBuildId(const std::string& working_dir) {
  const std::string name = std::filesystem::path(working_dir).filename().string();
  return absl::StrCat("nvcc-", name.empty() ? "root" : name, "-",
                      DigestOfBytes(working_dir).hash().substr(0, 8));
}

LauncherTarget LauncherTargetFrom(const EnvironmentLookup& env) {
  LauncherTarget target;
  target.coordinator.coordinator = env("FARM_COORDINATOR");
  target.coordinator.farm_dir = env("FARM_DIR");
  target.coordinator.token_file = env("FARM_TOKEN_FILE");
  target.coordinator.tls = ClientTlsFilesFrom(env);
  target.build_id = env("FARM_BUILD_ID");
  if (target.build_id.empty()) {
    std::error_code ec;
    target.build_id = DefaultBuildId(std::filesystem::current_path(ec).string());
  }
  return target;
}

}  // namespace farm
