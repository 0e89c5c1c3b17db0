// farmctl publish WHEEL --to URL|builtin | --command "...": puts a wheel where pip can get
// it — any PyPI-compatible repository through the legacy upload API (what twine speaks),
// the farm coordinator's own index, or a command hook. Exit codes: 0 published (or already
// there with --skip-existing / identical bytes), 2 bad input or the name is taken by other
// bytes, 3 credentials refused, 1 anything worth retrying (connection, 5xx, hook failure).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/command_support.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/net/address.h"
#include "libfarm/nvcc/shell_words.h"
#include "libfarm/publish/command_hook_publisher.h"
#include "libfarm/publish/legacy_upload_client.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;

struct PublishArgs {
  std::string wheel;
  std::string to;
  std::string command;
  std::string username;
  std::string password_env = "FARM_PUBLISH_PASSWORD";
  bool password_env_given = false;
  std::string ca_cert;
  bool skip_existing = false;
};

// The coordinator's upload URL and its token: "builtin" means the farm's own index.
absl::StatusOr<LegacyUploadOptions> BuiltinTarget(const GlobalOptions& global) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  auto client = ConnectToFarm(global);
  if (!client.ok()) return client.status();
  auto status = (*client)->GetStatus();
  if (!status.ok()) return status.status();
  if (status->http_address().empty()) {
    return absl::FailedPreconditionError(
        "the coordinator serves no HTTP (--http-listen ''), so it has no package index. Fix: "
        "restart it with --http-listen HOST:PORT");
  }
  auto http = ParseHostPort(status->http_address());
  if (!http.ok()) return http.status();
  // A wildcard listen address is not somewhere to connect to; use the host we reached.
  if (http->host == "0.0.0.0" || http->host == "::") {
    auto grpc = ParseHostPort(target->address);
    if (grpc.ok()) http->host = grpc->host;
  }
  // A TLS coordinator serves its index over HTTPS with the certificate its gRPC port shows,
  // so the CA that verified the one verifies the other.
  return LegacyUploadOptions{.url = absl::StrCat(status->tls() ? "https://" : "http://",
                                                 FormatHostPort(*http), "/legacy/"),
                             .username = "__token__",
                             .password = target->token,
                             .ca_cert_file = status->tls() ? target->tls_files.ca_file : ""};
}

absl::StatusOr<std::unique_ptr<Publisher>> MakePublisher(const CliContext& ctx,
                                                         const PublishArgs& args) {
  if (args.to.empty() == args.command.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of --to URL (or --to builtin) and --command \"PROGRAM ARGS...\"");
  }
  if (!args.command.empty()) {
    auto argv = SplitShellWords(args.command);
    if (!argv.ok()) return argv.status();
    auto hook = CommandHookPublisher::Create(*std::move(argv));
    if (!hook.ok()) return hook.status();
    return std::unique_ptr<Publisher>(std::move(*hook));
  }
  LegacyUploadOptions options;
  if (args.to == "builtin") {
    auto builtin = BuiltinTarget(ctx.global);
    if (!builtin.ok()) return builtin.status();
    options = *std::move(builtin);
  } else {
    options.url = args.to;
    options.username = args.username;
    // Passwords come from the environment only: argv shows up in `ps` and shell history.
    const char* password = std::getenv(args.password_env.c_str());
    if (password != nullptr) {
      options.password = password;
      if (options.username.empty()) options.username = "__token__";
    } else if (args.password_env_given || !args.username.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the environment variable ", args.password_env,
                       " (the repository password) is not set. Fix: export ", args.password_env,
                       "=... or name another variable with --password-env"));
    }
  }
  options.skip_existing = args.skip_existing;
  if (!args.ca_cert.empty()) options.ca_cert_file = args.ca_cert;
  auto client = LegacyUploadClient::Create(std::move(options));
  if (!client.ok()) return client.status();
  return std::unique_ptr<Publisher>(std::move(*client));
}

int Publish(const CliContext& ctx, const PublishArgs& args) {
  std::error_code ec;
  if (!fs::is_regular_file(args.wheel, ec)) {
    return Fail(absl::NotFoundError(absl::StrCat("no such wheel file: ", args.wheel)));
  }
  auto publisher = MakePublisher(ctx, args);
  if (!publisher.ok()) return Fail(publisher.status());
  auto result = (*publisher)->Publish(args.wheel);
  if (!result.ok()) return Fail(result.status());
  const std::string filename = fs::path(args.wheel).filename().string();
  if (ctx.global.json) {
    PrintJson({{"wheel", filename},
               {"target", (*publisher)->Describe()},
               {"location", result->location},
               {"already_present", result->already_present},
               {"detail", result->detail}});
  } else {
    std::cout << (result->already_present ? "already present: " : "published ") << filename
              << " -> " << (*publisher)->Describe() << std::endl;
    if (!result->detail.empty()) std::cout << result->detail << std::endl;
  }
  return 0;
}

}  // namespace

void AddPublishCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<PublishArgs>();
  auto* cmd = app.add_subcommand(
      "publish", "upload a wheel to a PyPI-compatible repository, the farm's index, or a hook");
  cmd->add_option("WHEEL", args->wheel, "the .whl file")->required();
  cmd->add_option("--to", args->to,
                  "upload URL (https://host/legacy/, pypiserver's root URL, devpi's "
                  "/USER/INDEX/), or 'builtin' for the coordinator's own index");
  cmd->add_option("--command", args->command,
                  "run this instead of uploading, e.g. \"gh release upload v1 {wheel}\"; "
                  "placeholders {wheel} {filename} {name} {version} (also in the environment as "
                  "FARM_WHEEL, FARM_WHEEL_FILENAME, FARM_WHEEL_NAME, FARM_WHEEL_VERSION); no "
                  "shell is involved, and a placeholder inside a `sh -c` script is refused");
  cmd->add_option("--username", args->username,
                  "repository user name (default __token__ when a password is set)");
  cmd->add_option("--password-env", args->password_env,
                  "environment variable holding the password or API token")
      ->capture_default_str()
      ->each([args](const std::string&) { args->password_env_given = true; });
  cmd->add_option("--ca-cert", args->ca_cert, "CA bundle for an https repository's certificate");
  cmd->add_flag("--skip-existing", args->skip_existing,
                "succeed when the repository already has a file of that name");
  cmd->callback([&ctx, args] { ctx.exit_code = Publish(ctx, *args); });
}

}  // namespace farm::cli
