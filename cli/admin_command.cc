// farmctl admin backup DIR: an online backup of the farm (state checkpoint + CAS blobs),
// streamed from the coordinator into DIR on this machine. Restore with
// farm-coordinator --restore-from DIR.
#include <iostream>

#include "cli/backup_receiver.h"
#include "cli/command_support.h"
#include "farm/v1/admin_service.grpc.pb.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/units/byte_size.h"

namespace farm::cli {
namespace {

absl::StatusOr<BackupManifest> Backup(const GlobalOptions& global, const std::string& dir) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  auto receiver = BackupReceiver::Begin(dir);
  if (!receiver.ok()) return receiver.status();
  auto stub = farm::v1::AdminService::NewStub(DialCoordinator(target->address, target->channel));
  // A backup takes as long as its blobs take to copy: no deadline beyond a day.
  const CoordinatorCall call(target->address, target->token, absl::Hours(24));
  grpc::ClientContext ctx;
  call.Prepare(ctx);
  auto reader = stub->Backup(&ctx, farm::v1::BackupRequest());
  farm::v1::BackupChunk chunk;
  absl::Status taken = absl::OkStatus();
  while (taken.ok() && reader->Read(&chunk)) taken = (*receiver)->Take(chunk);
  if (!taken.ok()) {
    ctx.TryCancel();
    reader->Finish();
    return taken;
  }
  if (absl::Status s = call.Explain(reader->Finish()); !s.ok()) return s;
  return (*receiver)->Finish();
}

}  // namespace

void AddAdminCommand(CLI::App& app, CliContext& ctx) {
  auto* admin = app.add_subcommand("admin", "operator tasks: backups");
  admin->require_subcommand(1);
  static std::string dir;
  auto* backup = admin->add_subcommand(
      "backup",
      "copy the farm's state and CAS into DIR (a new directory) while it serves; restore with "
      "'farm-coordinator --restore-from DIR --data-dir NEW'");
  backup->add_option("DIR", dir, "where the backup goes (must not exist yet)")->required();
  backup->callback([&ctx] {
    auto manifest = Backup(ctx.global, dir);
    if (!manifest.ok()) {
      ctx.exit_code = Fail(manifest.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson({{"dir", dir},
                 {"files", manifest->files},
                 {"bytes", manifest->bytes},
                 {"blobs", manifest->blobs},
                 {"created_at", manifest->created_at}});
      return;
    }
    std::cout << "backed up " << manifest->files << " files (" << FormatByteSize(manifest->bytes)
              << ", " << manifest->blobs << " CAS blobs) into " << dir << "\n"
              << "Restore: farm-coordinator --restore-from " << dir << " --data-dir NEW_DIR\n";
  });
}

}  // namespace farm::cli
