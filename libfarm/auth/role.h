// What a farm token may do. Each token has exactly one role; which RPCs each role may call
// is the table in method_access.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

enum class Role {
  kAdmin,   // everything, including tokens and backups (the coordinator's token file)
  kSubmit,  // submit and cancel builds, run actions, upload sources and wheels, read
  kWorker,  // register under its own name, lease, report results
  kRead,    // status, workers, builds, logs, recipes, the dashboard and index
  kBuild,   // one wheel build's host and its farm-nvcc, while that build runs
};

// "admin", "submit", "worker", "read", "build".
std::string RoleName(Role role);

// The role named `name` (any role, "build" included); nullopt for no role.
std::optional<Role> RoleNamed(absl::string_view name);

// The roles an operator may give a token with `farmctl token create` (not "build": the
// coordinator issues those to the builds it runs).
std::vector<Role> CreatableRoles();

// INVALID_ARGUMENT naming the roles when `name` is not one of CreatableRoles().
absl::StatusOr<Role> ParseCreatableRole(absl::string_view name);

}  // namespace farm
