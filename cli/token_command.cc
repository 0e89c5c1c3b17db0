// farmctl token create|list|revoke: the farm's tokens beyond the coordinator's token file
// (admin only). A token's text is shown once, at creation; the coordinator keeps its hash.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/command_support.h"
#include "cli/text_table.h"
#include "farm/v1/tokens.grpc.pb.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/rpc/channel.h"

namespace farm::cli {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(30);

// One call of the TokenService, resolved, dialled and explained like every farmctl call.
template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> CallTokens(const GlobalOptions& global, const Request& request,
                                    Method method) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  auto stub = farm::v1::TokenService::NewStub(DialCoordinator(target->address, target->channel));
  const CoordinatorCall call(target->address, target->token, kTimeout);
  grpc::ClientContext ctx;
  call.Prepare(ctx);
  Response response;
  if (absl::Status s = call.Explain((stub.get()->*method)(&ctx, request, &response)); !s.ok()) {
    return s;
  }
  return response;
}

nlohmann::json RecordJson(const farm::v1::TokenRecord& r) {
  nlohmann::json out = {
      {"id", r.id()}, {"name", r.name()}, {"role", r.role()}, {"created_unix", r.created_unix()}};
  if (!r.build_id().empty()) out["build_id"] = r.build_id();
  return out;
}

int Create(const GlobalOptions& global, const std::string& role, const std::string& name,
           const std::string& out) {
  if (!out.empty() && std::filesystem::exists(out)) {
    return Fail(absl::AlreadyExistsError(
        absl::StrCat(out,
                     " exists; a token file is never overwritten. Fix: choose another --out "
                     "or remove the old file first")));
  }
  farm::v1::CreateTokenRequest request;
  request.set_role(role);
  request.set_name(name);
  auto made = CallTokens<farm::v1::CreateTokenRequest, farm::v1::CreateTokenResponse>(
      global, request, &farm::v1::TokenService::Stub::CreateToken);
  if (!made.ok()) return Fail(made.status());
  if (!out.empty()) {
    if (absl::Status s = WriteFileAtomically(out, made->token() + "\n", 0600); !s.ok()) {
      return Fail(
          absl::Status(s.code(), absl::StrCat(s.message(), " (the token ", made->record().id(),
                                              " was made: revoke it with farmctl token revoke ",
                                              made->record().id(), ")")));
    }
  }
  if (global.json) {
    nlohmann::json j = RecordJson(made->record());
    if (out.empty()) j["token"] = made->token();
    if (!out.empty()) j["file"] = out;
    PrintJson(j);
    return 0;
  }
  if (out.empty()) {
    // The token alone on stdout, so `farmctl token create ... > FILE` keeps just it.
    std::cout << made->token() << "\n";
    std::cerr << "token " << made->record().id() << " '" << name << "' (" << role
              << "): shown this once; the coordinator keeps only its hash\n";
  } else {
    std::cout << "token " << made->record().id() << " '" << name << "' (" << role << ") written to "
              << out << " (mode 0600)\n";
  }
  return 0;
}

int List(const GlobalOptions& global) {
  auto list = CallTokens<farm::v1::ListTokensRequest, farm::v1::ListTokensResponse>(
      global, farm::v1::ListTokensRequest(), &farm::v1::TokenService::Stub::ListTokens);
  if (!list.ok()) return Fail(list.status());
  if (global.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : list->tokens()) j.push_back(RecordJson(r));
    PrintJson(j);
    return 0;
  }
  TextTable table({"ID", "NAME", "ROLE", "CREATED", "BUILD"});
  for (const auto& r : list->tokens()) {
    table.AddRow({r.id(), r.name(), r.role(),
                  absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(r.created_unix()),
                                   absl::UTCTimeZone()),
                  r.build_id().empty() ? "-" : r.build_id()});
  }
  std::cout << table.Render()
            << "(and the coordinator's token file: role admin, id farm, not revocable)\n";
  return 0;
}

int Revoke(const GlobalOptions& global, const std::string& id) {
  farm::v1::RevokeTokenRequest request;
  request.set_id(id);
  auto done = CallTokens<farm::v1::RevokeTokenRequest, farm::v1::RevokeTokenResponse>(
      global, request, &farm::v1::TokenService::Stub::RevokeToken);
  if (!done.ok()) return Fail(done.status());
  if (global.json) {
    PrintJson({{"revoked", id}});
  } else {
    std::cout << "token " << id << " revoked: refused from the next call on\n";
  }
  return 0;
}

}  // namespace

void AddTokenCommand(CLI::App& app, CliContext& ctx) {
  auto* token = app.add_subcommand(
      "token", "the farm's tokens: one role each (admin, submit, worker, read); admin only");
  token->require_subcommand(1);

  static std::string role;
  static std::string name;
  static std::string out;
  auto* create = token->add_subcommand(
      "create", "make a token; prints it once (or writes it to --out, mode 0600)");
  create->add_option("--role", role, "admin, submit, worker or read")->required();
  create->add_option("--name", name, "who holds it, e.g. ci-arm or worker-grace-3")->required();
  create->add_option("--out", out, "write the token to this new file instead of stdout");
  create->callback([&ctx] { ctx.exit_code = Create(ctx.global, role, name, out); });

  auto* list = token->add_subcommand("list", "every token's id, name, role and creation time");
  list->callback([&ctx] { ctx.exit_code = List(ctx.global); });

  static std::string id;
  auto* revoke =
      token->add_subcommand("revoke", "revoke a token by id; refused from its next call on");
  revoke->add_option("ID", id, "the id `farmctl token list` shows")->required();
  revoke->callback([&ctx] { ctx.exit_code = Revoke(ctx.global, id); });
}

}  // namespace farm::cli
