#include "libfarm/client/coordinator_target.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/auth/token.h"
#include "libfarm/client/local_farm_paths.h"
#include "libfarm/net/address.h"

namespace farm {

absl::StatusOr<CoordinatorTarget> ResolveCoordinatorTarget(const CoordinatorChoice& choice) {
  CoordinatorTarget target;
  target.address = choice.coordinator;
  target.token_file = choice.token_file;

  std::optional<LocalFarmRecord> local;
  std::string local_why;
  if (!choice.farm_dir.empty()) {
    const std::string dir = std::filesystem::absolute(choice.farm_dir).lexically_normal().string();
    auto record = ReadLocalFarmRecord(dir);
    if (!record.ok() || !CoordinatorIsRunning(*record)) {
      return absl::FailedPreconditionError(
          absl::StrCat("--farm-dir ", dir,
                       ": no local farm is running there. Fix: start it with 'farmctl up "
                       "--data-dir ",
                       dir, "', or drop --farm-dir / FARM_DIR to use the current local farm"));
    }
    local = *record;
    local_why = "--farm-dir";
  } else if (auto dir = CurrentLocalFarmDir()) {
    auto record = ReadLocalFarmRecord(*dir);
    if (record.ok()) local = *record;
    local_why = "current";
  }
  if (target.address.empty()) {
    target.address = local ? local->grpc_address : "127.0.0.1:7420";
    target.chosen_by = local ? absl::StrCat("local farm ", local->data_dir, " (", local_why, ")")
                             : "default address";
  } else {
    target.chosen_by = "--coordinator / FARM_COORDINATOR";
  }
  if (auto hp = ParseHostPort(target.address); !hp.ok() && !IsUnixSocketAddress(target.address)) {
    return absl::InvalidArgumentError(absl::StrCat("--coordinator: ", hp.status().message()));
  }
  if (target.token_file.empty() && local && local->grpc_address == target.address) {
    target.token_file = local->token_file;
  }
  if (target.token_file.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no farm token for ", target.address,
        ". Fix: pass --token-file (or set FARM_TOKEN_FILE) to the coordinator's token file, or "
        "start a local farm with 'farmctl up'"));
  }
  auto token = ReadTokenFile(target.token_file);
  if (!token.ok()) return token.status();
  target.token = *token;

  target.tls_files = choice.tls;
  if (target.tls_files.ca_file.empty() && target.tls_files.cert_file.empty() && local &&
      local->grpc_address == target.address) {
    target.tls_files = local->tls;
  }
  auto channel = LoadChannelOptions(target.tls_files);
  if (!channel.ok()) return channel.status();
  target.channel = *std::move(channel);
  return target;
}

}  // namespace farm
