// Whose compile cache entries a caller writes and reads. A wheel build runs code the farm
// did not write, and that code can read its build token, so an entry a build token writes is
// an answer only for compiles of the same trust: the same submitter's builds of the same
// package version (the only ones whose keys can match, since a key holds the source's real
// path and the build directory is named after the package version). Admin-submitted builds
// form the trusted domain a submit token's builds may also read; an admin's own farm-nvcc
// writes and reads a scope of its own, which a submit token's farm-nvcc reads too.
//
//   caller                              writes                       reads
//   admin                               admin                        admin
//   submit                              (refused by the role table)  admin
//   build of an admin's build P V       builds/admin/P/V             builds/admin/P/V
//   build of submit token T's build     builds/token:T/P/V           builds/token:T/P/V, then
//                                                                    builds/admin/P/V
//   build with no submitter recorded    build/<build id>             build/<build id>
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/builds/build_registry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::coordinator {

struct CompileCacheScopes {
  std::string write;              // where the caller's entries go
  std::vector<std::string> read;  // where its lookups look, the first entry found wins
};

// The scopes of `caller`; a build token's come from its build's record (NOT_FOUND when the
// registry no longer has it).
absl::StatusOr<CompileCacheScopes> CompileCacheScopesOf(const Caller& caller,
                                                        const BuildRegistry& builds);

}  // namespace farm::coordinator
