// Whose learnt costs (ActionHistory) a caller's actions teach and read. What one tenant's
// builds teach the scheduler is theirs: another tenant can neither learn from it which units
// were compiled and for how long, nor rewrite it with actions of its own that carry the same
// history key. Admins' history is trusted and read by everyone after their own.
//
//   caller                              writes                 reads, first found wins
//   admin                               admin                  admin
//   submit token T                      token:T                token:T, admin
//   build of an admin's build of P      builds/admin/P         builds/admin/P, admin
//   build of token T's build of P       builds/token:T/P       builds/token:T/P,
//                                                              builds/admin/P, admin
//   build with no submitter recorded    build/<build id>       build/<build id>
//
// Across versions of one package the scope is the same: a unit's cost changes little between
// releases, and ordering the first build of a new version well is the point of history.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/builds/build_registry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::coordinator {

struct HistoryScopes {
  std::string write;              // empty: nothing is learnt per history key
  std::vector<std::string> read;  // first found wins
};

// The scopes of `caller`; a build token's come from its build's record (NOT_FOUND when the
// registry no longer has it).
absl::StatusOr<HistoryScopes> HistoryScopesOf(const Caller& caller, const BuildRegistry& builds);

}  // namespace farm::coordinator
