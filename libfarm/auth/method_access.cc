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
// write).
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
  for (const MethodAccess& row : MethodAccessTable()) {
    if (row.method != method) continue;
    if (std::find(row.roles.begin(), row.roles.end(), role) != row.roles.end()) {
      return absl::OkStatus();
    }
    std::vector<std::string> names;
    for (Role r : row.roles) names.push_back(RoleName(r));
    return absl::PermissionDeniedError(
        absl::StrCat("a '", RoleName(role), "' token may not call ", method,
                     " (roles that may: ", absl::StrJoin(names, ", "),
                     "). Fix: use a token with one of those roles (an admin "
                     "makes one with `farmctl token create --role ROLE --name NAME`)"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat(method,
                   " has no access rule, so no token may call it. Fix: give it a row in "
                   "libfarm/auth/method_access.cc"));
}

}  // namespace farm
