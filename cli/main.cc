// farmctl: the Wheelfarm command line. Each command lives in its own *_command.cc.

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"

int main(int argc, char** argv) {
  farm::ComponentLogger("farmctl")->set_pattern("farmctl: %^%l%$: %v");
  farm::cli::CliContext ctx;
  ctx.global.coordinator = farm::GetEnv("FARM_COORDINATOR");
  ctx.global.farm_dir = farm::GetEnv("FARM_DIR");
  ctx.global.token_file = farm::GetEnv("FARM_TOKEN_FILE");
  ctx.global.tls = farm::ClientTlsFilesFromEnvironment();

  CLI::App app{"farmctl: build CUDA Python wheels on a Wheelfarm"};
  app.require_subcommand(1);
  app.add_option("--coordinator", ctx.global.coordinator,
                 "coordinator address (env FARM_COORDINATOR; default: the current local farm, "
                 "else 127.0.0.1:7420)");
  app.add_option("--farm-dir", ctx.global.farm_dir,
                 "talk to the local farm 'farmctl up --data-dir DIR' started (env FARM_DIR; "
                 "default: the current local farm)");
  app.add_option("--token-file", ctx.global.token_file,
                 "farm token file (env FARM_TOKEN_FILE; default: the local farm's)");
  app.add_option("--tls-ca", ctx.global.tls.ca_file,
                 "CA of the coordinator's certificate: connect with TLS (env FARM_TLS_CA; "
                 "default: the local farm's)");
  app.add_option("--tls-cert", ctx.global.tls.cert_file,
                 "client certificate for a coordinator that requires one (env FARM_TLS_CERT)");
  app.add_option("--tls-key", ctx.global.tls.key_file,
                 "the key of --tls-cert, chmod 600 (env FARM_TLS_KEY)");
  app.add_flag("--json", ctx.global.json, "machine-readable output");
  app.fallthrough();

  farm::cli::AddSubmitCommand(app, ctx);
  farm::cli::AddCancelCommand(app, ctx);
  farm::cli::AddStatusCommand(app, ctx);
  farm::cli::AddWorkersCommand(app, ctx);
  farm::cli::AddUpCommand(app, ctx);
  farm::cli::AddDownCommand(app, ctx);
  farm::cli::AddCasCommand(app, ctx);
  farm::cli::AddInspectCommand(app, ctx);
  farm::cli::AddVerifyCommand(app, ctx);
  farm::cli::AddPublishCommand(app, ctx);
  farm::cli::AddRecipesCommand(app, ctx);
  farm::cli::AddBuildsCommand(app, ctx);
  farm::cli::AddBuildCommand(app, ctx);
  farm::cli::AddLogsCommand(app, ctx);
  farm::cli::AddWatchCommand(app, ctx);
  farm::cli::AddToolkitCommand(app, ctx);
  farm::cli::AddAdminCommand(app, ctx);
  farm::cli::AddTokenCommand(app, ctx);

  CLI11_PARSE(app, argc, argv);
  return ctx.exit_code;
}
