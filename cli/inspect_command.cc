// farmctl inspect PATH...: the device code (SASS/PTX per arch, compression, bytes) and glibc
// needs of a library, object, static archive, cubin, fat binary or wheel. Needs neither a
// coordinator nor a CUDA toolkit.
#include <iostream>
#include <vector>

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
      "list CUDA device code (arch, kind, compression, bytes; loaded images apart from -rdc "
      "link-time inputs) and glibc needs of .so/.o/.a/.cubin/.fatbin/.whl files; exit 1 if "
      "some binary inside could not be read");
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("paths", *paths, "files to inspect")->required();
  cmd->callback([&ctx, paths] {
    // One inspection over every path: each file is named by its path, totals span them all.
    Inspection all;
    std::vector<std::string> empty;
    for (const std::string& path : *paths) {
      auto inspection = InspectPath(path);
      if (!inspection.ok()) {
        ctx.exit_code = Fail(inspection.status());
        return;
      }
      if (inspection->files.empty()) empty.push_back(path);
      for (InspectedFile& f : inspection->files) all.files.push_back(std::move(f));
    }
    if (ctx.global.json) {
      PrintJson(InspectionToJson(all));
    } else {
      std::cout << FormatInspection(all);
      for (const std::string& path : empty) std::cout << path << ": no ELF files inside\n";
    }
    if (all.HasErrors()) {
      for (const InspectedFile& f : all.files) {
        if (f.error.empty()) continue;
        ComponentLogger("farmctl")->error("{}: cannot read: {}", f.path, f.error);
      }
      ctx.exit_code = kExitUnreadableBinary;
    }
  });
}

}  // namespace farm::cli
