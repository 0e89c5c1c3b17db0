// The one table of who may call what: each gRPC method ("Service.Method") and the roles
// whose tokens may call it. A method missing from the table is refused to every token, so
// a new RPC stays closed until it is given a row here (method_access_test checks that every
// method of farm.v1 and of the REAPI services the coordinator serves has one).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "libfarm/auth/role.h"

namespace farm {

struct MethodAccess {
  std::string method;  // "BuildService.SubmitBuild"
  std::vector<Role> roles;
  // Whether an operator may let more roles call it (MethodGrants): a row whose callers are a
  // deployment's choice, as who writes REAPI's action cache is.
  bool grantable = false;
};

// Roles an operator lets call grantable methods beyond their rows, by method
// (farm-coordinator --reapi-action-cache-writers). The gate checks the table and these alike.
using MethodGrants = std::map<std::string, std::vector<Role>, std::less<>>;

// Every row, in the order of the services' protos (docs/security.md's role table is this table).
const std::vector<MethodAccess>& MethodAccessTable();

// OK when `role` may call `method`; PERMISSION_DENIED naming the roles that may, and the fix.
absl::Status CheckMayCall(Role role, absl::string_view method);
// CheckMayCall, counting the roles `grants` adds to the method's row.
absl::Status CheckMayCall(Role role, absl::string_view method, const MethodGrants& grants);

// INVALID_ARGUMENT naming the fix when `grants` names a method without a grantable row.
absl::Status CheckGrants(const MethodGrants& grants);

}  // namespace farm
