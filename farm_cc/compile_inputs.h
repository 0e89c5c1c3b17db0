// The files one compile reads, as the tree a worker's sandbox is made of: what the dependency
// scan listed, the headers its includes could find in any directory of the search (so a
// lookup answers in the sandbox as on this host), the locale's files; or the reason the
// compile cannot be the same on a worker.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/cas.pb.h"
#include "farm_cc/compiler_locator.h"
#include "libfarm/cc/cc_command_line.h"
#include "libfarm/cc/file_facts_cache.h"

namespace farm {

struct CompileInputs {
  farm::v1::FileTree tree;  // flat: what the worker lays out
  // The tree as sent, directories by digest (libfarm/file_tree/subtrees.h): the root blob,
  // which the action names, and its subtrees, most of them shared with the build's other
  // compiles.
  std::string bytes;
  farm::v1::Digest digest;  // of `bytes`
  std::vector<std::pair<farm::v1::Digest, std::string>> subtrees;
};

// `dependencies` and `search_dirs` as the scan gave them (dependency_scan.h), `env` the
// call's environment, `facts` what earlier calls learned by reading files (file_facts_cache.h),
// which this adds to. FAILED_PRECONDITION, with the reason, for a compile that must stay here:
// an input it cannot read as a plain file, __DATE__/__TIME__ in its sources, a
// -Wmissing-include-dirs warning the sandbox would add.
absl::StatusOr<CompileInputs> GatherCompileInputs(const CcInvocation& call,
                                                  const cc::CcCompilePlan& plan,
                                                  const std::vector<std::string>& dependencies,
                                                  const std::vector<std::string>& search_dirs,
                                                  const std::map<std::string, std::string>& env,
                                                  const std::string& cwd,
                                                  cc::FileFactsCache* facts = nullptr);

// The same tree without the compiler's scan: the source, and every file its #include,
// #include_next and __has_include names (and theirs, on down) find in its directory or in any
// directory of `search_dirs` and the command line's, every branch alike. A superset of what
// the compile reads, holding every header each of those lookups could find, so each answers
// in the sandbox as it does here. FAILED_PRECONDITION, with the reason, where that does not
// hold or farm-cc cannot tell: an include whose name a macro makes, a precompiled header,
// -include/-imacros/-finput-charset, and every reason of GatherCompileInputs (over the larger
// set); the caller then scans.
absl::StatusOr<CompileInputs> GatherCompileInputsFromIncludes(
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const std::vector<std::string>& search_dirs, const std::map<std::string, std::string>& env,
    const std::string& cwd, cc::FileFactsCache* facts = nullptr);

}  // namespace farm
