// What every farmctl command shares: global options and where its exit code goes.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "libfarm/tls/client_tls.h"

namespace farm::cli {

struct GlobalOptions {
  std::string coordinator;  // --coordinator / FARM_COORDINATOR; empty: local farm or default
  std::string farm_dir;     // --farm-dir / FARM_DIR: a local farm's data dir; empty: the current
  std::string token_file;   // --token-file / FARM_TOKEN_FILE
  ClientTlsFiles tls;       // --tls-ca, --tls-cert, --tls-key / FARM_TLS_*; empty: local farm's
  bool json = false;        // --json: machine-readable output on stdout
};

struct CliContext {
  GlobalOptions global;
  int exit_code = 0;  // set by the command that ran
};

// Each command lives in its own file and registers itself with one of these:
//   void AddXCommand(CLI::App& app, CliContext& ctx);
// The subcommand's callback does the work and sets ctx.exit_code.
void AddStatusCommand(CLI::App& app, CliContext& ctx);
void AddWorkersCommand(CLI::App& app, CliContext& ctx);
void AddUpCommand(CLI::App& app, CliContext& ctx);
void AddDownCommand(CLI::App& app, CliContext& ctx);
void AddCasCommand(CLI::App& app, CliContext& ctx);
void AddInspectCommand(CLI::App& app, CliContext& ctx);
void AddVerifyCommand(CLI::App& app, CliContext& ctx);
void AddPublishCommand(CLI::App& app, CliContext& ctx);
void AddRecipesCommand(CLI::App& app, CliContext& ctx);
void AddBuildsCommand(CLI::App& app, CliContext& ctx);
void AddBuildCommand(CLI::App& app, CliContext& ctx);
void AddLogsCommand(CLI::App& app, CliContext& ctx);
void AddWatchCommand(CLI::App& app, CliContext& ctx);
void AddSubmitCommand(CLI::App& app, CliContext& ctx);
void AddCancelCommand(CLI::App& app, CliContext& ctx);
void AddToolkitCommand(CLI::App& app, CliContext& ctx);
void AddAdminCommand(CLI::App& app, CliContext& ctx);
void AddTokenCommand(CLI::App& app, CliContext& ctx);

}  // namespace farm::cli
