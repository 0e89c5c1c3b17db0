#include "coordinator/scheduler/history_scope.h"

#include "absl/strings/str_cat.h"
#include "libfarm/auth/role.h"

namespace farm::coordinator {
namespace {

constexpr char kAdminScope[] = "admin";

}  // namespace

absl::StatusOr<HistoryScopes> HistoryScopesOf(const Caller& caller, const BuildRegistry& builds) {
  if (caller.role == Role::kAdmin)
    return HistoryScopes{.write = kAdminScope, .read = {kAdminScope}};
  if (caller.role != Role::kBuild) {
    const std::string own = absl::StrCat("token:", caller.token_id);
    return HistoryScopes{.write = own, .read = {own, kAdminScope}};
  }
  auto build = builds.Get(caller.build_id);
  if (!build.ok()) return build.status();
  const farm::v1::Submitter& by = build->submitted_by();
  const std::string admin_builds = absl::StrCat("builds/admin/", build->package());
  if (by.role() == RoleName(Role::kAdmin)) {
    return HistoryScopes{.write = admin_builds, .read = {admin_builds, kAdminScope}};
  }
  if (by.role() == RoleName(Role::kSubmit) && !by.token_id().empty()) {
    const std::string own = absl::StrCat("builds/token:", by.token_id(), "/", build->package());
    return HistoryScopes{.write = own, .read = {own, admin_builds, kAdminScope}};
  }
  // A build recorded before submitters were: it reads only what it wrote itself.
  const std::string alone = absl::StrCat("build/", build->id());
  return HistoryScopes{.write = alone, .read = {alone}};
}

}  // namespace farm::coordinator
