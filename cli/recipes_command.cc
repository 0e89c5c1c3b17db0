// farmctl recipes: what the coordinator can build (name, versions, source, CUDA, glibc).
#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "cli/text_table.h"
#include "farm/v1/recipes.grpc.pb.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::cli {
namespace {

nlohmann::json RecipeToJson(const farm::v1::Recipe& r) {
  nlohmann::json versions = nlohmann::json::array();
  for (const auto& v : r.versions()) {
    nlohmann::json source = {{"kind", v.source().kind()}};
    if (v.source().kind() == "git") {
      source["url"] = v.source().git_url();
      source["tag"] = v.source().tag_pattern();
      source["submodules"] = v.source().submodules();
    } else if (v.source().kind() == "pypi") {
      source["project"] = v.source().pypi_project();
      source["index"] = v.source().pypi_index();  // "": the build host's PIP_INDEX_URL, else PyPI
    } else if (v.source().kind() == "archive") {
      source["url"] = v.source().archive_url();        // {version} unexpanded
      source["sha256"] = v.source().archive_sha256();  // "": not known
    } else {
      source["default_dir"] = v.source().default_dir();
    }
    versions.push_back({{"version", v.version()}, {"source", source}});
  }
  nlohmann::json publish = nlohmann::json::array();
  for (const auto& p : r.publish()) {
    nlohmann::json target = {{"kind", p.kind()}};
    if (!p.url().empty()) target["url"] = p.url();
    publish.push_back(target);
  }
  nlohmann::json out = {
      {"name", r.name()},
      {"package", r.package()},
      {"description", r.description()},
      {"file", r.file()},
      {"versions", versions},
      {"cpu_archs", std::vector<std::string>(r.cpu_archs().begin(), r.cpu_archs().end())},
      {"glibc_max", r.glibc_max()},
      {"cuda_min", r.cuda_min()},
      {"cuda_max", r.cuda_max()},
      {"python", r.python()},
      {"publish", publish},
  };
  if (r.has_size_estimate()) {
    out["size_estimate_mib"] = {{"base", r.size_base_mib()}, {"per_arch", r.size_per_arch_mib()}};
  }
  return out;
}

std::string RecipesTable(const farm::v1::ListRecipesResponse& list) {
  TextTable table({"NAME", "PACKAGE", "VERSIONS", "SOURCE", "CUDA", "GLIBC MAX", "CPU", "PYTHON"});
  for (const auto& r : list.recipes()) {
    std::vector<std::string> versions;
    std::vector<std::string> kinds;
    for (const auto& v : r.versions()) {
      versions.push_back(v.version());
      if (std::find(kinds.begin(), kinds.end(), v.source().kind()) == kinds.end()) {
        kinds.push_back(v.source().kind());
      }
    }
    const std::string cuda =
        r.cuda_min() == r.cuda_max() ? r.cuda_min() : absl::StrCat(r.cuda_min(), "–", r.cuda_max());
    table.AddRow({r.name(), r.package(), absl::StrJoin(versions, ", "), absl::StrJoin(kinds, ","),
                  cuda, r.glibc_max(), absl::StrJoin(r.cpu_archs(), ","), r.python()});
  }
  return table.Render();
}

}  // namespace

void AddRecipesCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "recipes", "list the recipes the coordinator loaded: versions, source, CUDA range, glibc");
  cmd->callback([&ctx] {
    auto target = ResolveCoordinatorTarget(ChoiceOf(ctx.global));
    if (!target.ok()) {
      ctx.exit_code = Fail(target.status());
      return;
    }
    auto stub = farm::v1::RecipeService::NewStub(DialCoordinator(target->address, target->channel));
    grpc::ClientContext rpc;
    AttachToken(rpc, target->token);
    rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    farm::v1::ListRecipesResponse list;
    grpc::Status s = stub->ListRecipes(&rpc, farm::v1::ListRecipesRequest(), &list);
    if (!s.ok()) {
      absl::Status status = FromGrpcStatus(s);
      if (status.code() == absl::StatusCode::kUnavailable ||
          status.code() == absl::StatusCode::kDeadlineExceeded) {
        status =
            absl::Status(status.code(), absl::StrCat("cannot reach the coordinator at ",
                                                     target->address, " (", status.message(),
                                                     "). Fix: start one ('farmctl up') or point "
                                                     "--coordinator / FARM_COORDINATOR at it"));
      }
      ctx.exit_code = Fail(status);
      return;
    }
    if (ctx.global.json) {
      nlohmann::json recipes = nlohmann::json::array();
      for (const auto& r : list.recipes()) recipes.push_back(RecipeToJson(r));
      PrintJson({{"recipes_dir", list.recipes_dir()},
                 {"recipes", recipes},
                 {"load_errors",
                  std::vector<std::string>(list.load_errors().begin(), list.load_errors().end())}});
      return;
    }
    std::cout << RecipesTable(list);
    if (list.recipes().empty()) std::cout << "(no recipes in " << list.recipes_dir() << ")\n";
    for (const std::string& e : list.load_errors()) {
      // Shown, but the listing itself succeeded: the coordinator serves the other recipes.
      ComponentLogger("farmctl")->warn("not loaded: {}", e);
    }
  });
}

}  // namespace farm::cli
