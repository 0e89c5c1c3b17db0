#include "libfarm/auth/method_access.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

constexpr Role kAdmin = Role::kAdmin;
constexpr Role kSubmit = Role::kSubmit;
constexpr Role kWorker = Role::kWorker;
constexpr Role kRead = Role::kRead;
constexpr Role kBuild = Role::kBuild;

// Build tokens reach only what a wheel build's farm-nvcc does for its own build (the
// services check that the build id is the token's). Cache writes: the compile cache takes
// entries from build tokens and admins only, each into its own scope
// (coordinator/compile_cache/compile_cache_scope.h); the action cache is written by the
// coordinator from what workers report (REAPI's trust model: clients read, trusted executors
// write); REAPI's action cache likewise, by admins, and by the roles an operator grants
// (docs/reapi.md: the write policy).
std::vector<MethodAccess> MakeTable() {
  return {
      {"ActionService.Execute", {kAdmin, kSubmit, kBuild}},
      {"ActionService.Wait", {kAdmin, kSubmit, kBuild, kRead}},
      {"ActionService.Get", {kAdmin, kSubmit, kBuild, kRead}},
      {"ActionService.Cancel", {kAdmin, kSubmit, kBuild}},
      {"ActionService.GetCompileResult", {kAdmin, kSubmit, kBuild}},
      {"ActionService.GetExpectedCosts", {kAdmin, kSubmit, kBuild}},
      {"ActionService.PutCompileResult", {kAdmin, kBuild}},
      {"AdminService.Backup", {kAdmin}},
      {"BuildService.ListBuilds", {kAdmin, kSubmit, kRead}},
      {"BuildService.GetBuild", {kAdmin, kSubmit, kRead}},
      {"BuildService.GetBuildLogs", {kAdmin, kSubmit, kRead}},
      {"BuildService.ListActions", {kAdmin, kSubmit, kRead}},
      // A worker streams a wheel build's log with that build's token, so a worker token
      // writes no build's log.
      {"BuildService.AppendBuildLog", {kAdmin, kBuild}},
      {"BuildService.SubmitBuild", {kAdmin, kSubmit}},
      {"BuildService.CancelBuild", {kAdmin, kSubmit}},
      {"BuildService.ReportNvccCall", {kAdmin, kSubmit, kBuild}},
      {"CasService.FindMissing", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"CasService.Upload", {kAdmin, kSubmit, kWorker, kBuild}},
      {"CasService.Download", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"CasService.Stat", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      // REAPI v2's cache side (coordinator/reapi/, docs/reapi.md) reaches the same CAS as
      // CasService, so the same roles: whoever may read the CAS reads through REAPI, whoever
      // may upload to it uploads through REAPI. Capabilities answers every CAS reader.
      {"Capabilities.GetCapabilities", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ContentAddressableStorage.FindMissingBlobs", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ContentAddressableStorage.BatchUpdateBlobs", {kAdmin, kSubmit, kWorker, kBuild}},
      {"ContentAddressableStorage.BatchReadBlobs", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ContentAddressableStorage.GetTree", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ByteStream.Read", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ByteStream.Write", {kAdmin, kSubmit, kWorker, kBuild}},
      {"ByteStream.QueryWriteStatus", {kAdmin, kSubmit, kWorker, kBuild}},
      // Every CAS reader reads REAPI's action cache (its results name only CAS blobs); only
      // admins write it unless --reapi-action-cache-writers grants more roles, since a
      // written result is what every later client runs with.
      {"ActionCache.GetActionResult", {kAdmin, kSubmit, kWorker, kBuild, kRead}},
      {"ActionCache.UpdateActionResult", {kAdmin}, /*grantable=*/true},
      {"FarmService.GetStatus", {kAdmin, kSubmit, kRead}},
      {"FarmService.ListWorkers", {kAdmin, kSubmit, kRead}},
      {"RecipeService.ListRecipes", {kAdmin, kSubmit, kRead}},
      {"RecipeService.GetRecipe", {kAdmin, kSubmit, kRead}},
      {"TokenService.CreateToken", {kAdmin}},
      {"TokenService.ListTokens", {kAdmin}},
      {"TokenService.RevokeToken", {kAdmin}},
      {"WorkerService.Register", {kAdmin, kWorker}},
      {"WorkerService.Heartbeat", {kAdmin, kWorker}},
      {"WorkerService.Leave", {kAdmin, kWorker}},
      {"WorkerService.LeaseActions", {kAdmin, kWorker}},
      {"WorkerService.CompleteActions", {kAdmin, kWorker}},
      // The HTTP port: the dashboard's JSON API and the index's uploads.
      {"HTTP.Read", {kAdmin, kSubmit, kRead}},
      {"HTTP.Upload", {kAdmin, kSubmit}},
  };
}

}  // namespace

const std::vector<MethodAccess>& MethodAccessTable() {
  static const std::vector<MethodAccess>* table = new std::vector<MethodAccess>(MakeTable());
  return *table;
}

absl::Status CheckMayCall(Role role, absl::string_view method) {
  return CheckMayCall(role, method, MethodGrants());
}

absl::Status CheckMayCall(Role role, absl::string_view method, const MethodGrants& grants) {
  for (const MethodAccess& row : MethodAccessTable()) {
    if (row.method != method) continue;
    std::vector<Role> roles = row.roles;
    if (auto granted = grants.find(method); row.grantable && granted != grants.end()) {
      for (Role r : granted->second) {
        if (std::find(roles.begin(), roles.end(), r) == roles.end()) roles.push_back(r);
      }
    }
    if (std::find(roles.begin(), roles.end(), role) != roles.end()) return absl::OkStatus();
    std::vector<std::string> names;
    for (Role r : roles) names.push_back(RoleName(r));
    return absl::PermissionDeniedError(
        absl::StrCat("a '", RoleName(role), "' token may not call ", method,
                     " (roles that may: ", absl::StrJoin(names, ", "),
                     "). Fix: use a token with one of those roles (an admin "
                     "makes one with `farmctl token create --role ROLE --name NAME`)",
                     row.grantable ? "; or let the role call it with the coordinator option "
                                     "that grants it (docs/reapi.md)"
                                   : ""));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(method,
                   " has no access rule, so no token may call it. Fix: give it a row in "
                   "libfarm/auth/method_access.cc"));
}

absl::Status CheckGrants(const MethodGrants& grants) {
  for (const auto& [method, roles] : grants) {
    const auto& table = MethodAccessTable();
    const auto row = std::find_if(table.begin(), table.end(),
                                  [&](const MethodAccess& r) { return r.method == method; });
    if (row == table.end() || !row->grantable) {
      return absl::InvalidArgumentError(absl::StrCat(
          method,
          " takes no roles beyond its row in libfarm/auth/method_access.cc. Fix: grant "
          "only a method whose row is grantable"));
    }
  }
  return absl::OkStatus();
}

}  // namespace farm
