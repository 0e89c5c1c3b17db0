// farm-cc's cross-tree cache: a host compile's result kept under a key in which
// FARM_CC_BASEDIR reads as a fixed stand-in, so the same sources compiled in another
// checkout or build tree (another base dir) take the object instead of compiling it again.
//
// The farm's action cache already answers the same call in the same tree. An entry here is
// written only after a compile whose object does not name the base dir (no debug info of it,
// no __FILE__ of it): the compile in the other tree, reading the same bytes at the same
// places relative to its base dir, writes the same object. Its dependency file and
// diagnostics are written again with that tree's paths, laid out as the compiler would.
// Entries live in farm-nvcc's compile cache (GetCompileResult/PutCompileResult), under the
// same trust scopes.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "farm_cc/farm_host_compile.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/cc/base_dir.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm {

// The files a compile writes, at their absolute paths ("" for no dependency file).
struct HostCompileOutputs {
  std::string object;
  std::string depfile;
};

class CrossTreeCache {
 public:
  // The entry key of the filesystem image action `action` (its input tree `input_tree`, its
  // toolchain's `toolchain_tree`). FAILED_PRECONDITION with the reason when the call has
  // none: the working directory or the compiler lie outside/inside the base dir the wrong
  // way, or a word names the base dir other than as a path (base_dir.h).
  static absl::StatusOr<CrossTreeCache> ForCompile(const cc::BaseDir& base_dir,
                                                   const farm::v1::Action& action,
                                                   const farm::v1::FileTree& input_tree,
                                                   const farm::v1::FileTree& toolchain_tree,
                                                   cc::CompilerFamily family,
                                                   HostCompileOutputs outputs);

  const std::string& key() const { return key_; }

  // The entry's result with its outputs written, or nullopt when there is none (or one
  // this call cannot take, logged).
  absl::StatusOr<std::optional<FarmHostCompileResult>> Restore(ActionClient* actions,
                                                               CasClient* cas) const;

  // Keeps a passed compile's result (its object in the CAS as `object_digest`, both outputs
  // written here) when it holds for other trees; OK without an entry when it does not (the
  // reason logged).
  absl::Status Record(const FarmHostCompileResult& result, const farm::v1::Digest& object_digest,
                      ActionClient* actions, CasClient* cas) const;

 private:
  CrossTreeCache(cc::BaseDir base_dir, cc::CompilerFamily family, HostCompileOutputs outputs,
                 std::string key)
      : base_dir_(std::move(base_dir)),
        family_(family),
        outputs_(std::move(outputs)),
        key_(std::move(key)) {}

  cc::BaseDir base_dir_;
  cc::CompilerFamily family_;
  HostCompileOutputs outputs_;
  std::string key_;
};

}  // namespace farm
