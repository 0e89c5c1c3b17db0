#include "libfarm/auth/role.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {

std::string RoleName(Role role) {
  switch (role) {
    case Role::kAdmin:
      return "admin";
    case Role::kSubmit:
      return "submit";
    case Role::kWorker:
      return "worker";
    case Role::kRead:
      return "read";
    case Role::kBuild:
      return "build";
  }
  return "unknown";
}

std::optional<Role> RoleNamed(absl::string_view name) {
  for (Role role : {Role::kAdmin, Role::kSubmit, Role::kWorker, Role::kRead, Role::kBuild}) {
    if (RoleName(role) == name) return role;
  }
  return std::nullopt;
}

std::vector<Role> CreatableRoles() {
  return {Role::kAdmin, Role::kSubmit, Role::kWorker, Role::kRead};
}

absl::StatusOr<Role> ParseCreatableRole(absl::string_view name) {
  std::vector<std::string> names;
  for (Role role : CreatableRoles()) {
    if (RoleName(role) == name) return role;
    names.push_back(RoleName(role));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown role '", name,
                                                 "'. Fix: use one of: ", absl::StrJoin(names, ", "),
                                                 " (build tokens are issued by the coordinator)"));
}

}  // namespace farm
