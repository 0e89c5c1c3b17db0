#include "coordinator/compile_cache/compile_cache_scope.h"

#include "absl/strings/str_cat.h"
#include "libfarm/auth/role.h"

namespace farm::coordinator {
namespace {

constexpr char kAdminScope[] = "admin";

// The scope of builds of `build`'s package version submitted by `domain`.
std::string BuildsScope(absl::string_view domain, const farm::v1::Build& build) {
  return absl::StrCat("builds/", domain, "/", build.package(), "/", build.version());
}

}  // namespace

absl::StatusOr<CompileCacheScopes> CompileCacheScopesOf(const Caller& caller,
                                                        const BuildRegistry& builds) {
  if (caller.role != Role::kBuild) {
    // Admins write; everyone else who may call reads what admins wrote.
    return CompileCacheScopes{.write = caller.role == Role::kAdmin ? kAdminScope : "",
                              .read = {kAdminScope}};
  }
  auto build = builds.Get(caller.build_id);
  if (!build.ok()) return build.status();
  const farm::v1::Submitter& by = build->submitted_by();
  const std::string admin_builds = BuildsScope("admin", *build);
  if (by.role() == RoleName(Role::kAdmin)) {
    return CompileCacheScopes{.write = admin_builds, .read = {admin_builds}};
  }
  if (by.role() == RoleName(Role::kSubmit) && !by.token_id().empty()) {
    const std::string own = BuildsScope(absl::StrCat("token:", by.token_id()), *build);
    return CompileCacheScopes{.write = own, .read = {own, admin_builds}};
  }
  // A build recorded before submitters were: it reads only what it wrote itself.
  const std::string alone = absl::StrCat("build/", build->id());
  return CompileCacheScopes{.write = alone, .read = {alone}};
}

}  // namespace farm::coordinator
