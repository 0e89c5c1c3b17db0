// farmctl inspect PATH: the device code (SASS/PTX per arch, compression, bytes) and glibc
// needs of a library, object, static archive, cubin, fat binary or wheel. Needs neither a
// coordinator nor a CUDA toolkit.
#include <iostream>

#include "cli/command_support.h"
#include "libfarm/coverage/binary_inspector.h"
#include "libfarm/coverage/report_format.h"
#include "libfarm/logging/logger.h"

namespace farm::cli {
namespace {

// Some binary could not be read: the listing is incomplete.
constexpr int kExitUnreadableBinary = 1;

}  // namespace

void AddInspectCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "inspect",
      "list CUDA device code (arch, kind, compression, bytes) and glibc needs of a .so/.o/.a/"
      ".cubin/.fatbin/.whl; exit 1 if some binary inside could not be read");
  auto path = std::make_shared<std::string>();
  cmd->add_option("path", *path, "file to inspect")->required();
  cmd->callback([&ctx, path] {
    auto inspection = InspectPath(*path);
    if (!inspection.ok()) {
      ctx.exit_code = Fail(inspection.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(InspectionToJson(*inspection));
    } else {
      std::cout << FormatInspection(*inspection);
      if (inspection->files.empty()) std::cout << *path << ": no ELF files inside\n";
    }
    if (inspection->HasErrors()) {
      for (const InspectedFile& f : inspection->files) {
        if (f.error.empty()) continue;
        ComponentLogger("farmctl")->error("{}: cannot read: {}", f.path, f.error);
      }
      ctx.exit_code = kExitUnreadableBinary;
    }
  });
}

}  // namespace farm::cli
