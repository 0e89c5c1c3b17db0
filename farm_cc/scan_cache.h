// farm-cc's scan cache: a compile's dependency scan kept on this host (ccache's "direct
// mode"), so the same compile again, in this tree or, with FARM_CC_BASEDIR, in another, skips
// running the preprocessor.
//
// An entry is keyed by what steers the scan (the toolchain's digest, the compiler, every
// argument, the working directory and the compile's environment, the base dir read as its
// stand-in) and holds the scan's answer with the digest of the input tree made of it. It
// stands only while the tree made of it now has that digest: every file the compile read is
// unchanged, and no header has appeared (or gone) where any of its #include and
// __has_include names would be looked up, in the including file's directory and in every
// directory of the compiler's search list, built-in ones included (compile_inputs.h). Stronger
// than ccache's direct mode, which misses a new header that shadows one it recorded. What it
// cannot see is an include whose name a macro computes; docs/farm-cc.md says so.
//
// Entries live in 256 directories by their key's first byte; keeping one prunes its directory
// to its share of the bound, least recently found or kept first (ccache's cleanup, per
// subdirectory): the cache stays near its bound without a walk over all of it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "farm/v1/cas.pb.h"
#include "farm_cc/compile_inputs.h"
#include "farm_cc/compiler_locator.h"
#include "libfarm/cc/base_dir.h"
#include "libfarm/cc/dependency_scan.h"

namespace farm {

class ScanCache {
 public:
  // The entry of this call in `cache_dir`, or nullopt when the call has none (a word that
  // names the base dir other than as a path; the reason logged at debug level).
  static std::optional<ScanCache> ForCall(const std::string& cache_dir,
                                          const std::optional<cc::BaseDir>& base_dir,
                                          const farm::v1::Digest& toolchain_digest,
                                          const CcInvocation& call,
                                          const std::map<std::string, std::string>& action_env,
                                          const std::string& cwd);

  struct KeptScan {
    cc::DependencyScan scan;  // with this tree's paths
    std::string tree_key;     // what TreeKey() gave when it was kept
  };
  // The kept scan, or nullopt (none, or unreadable: a miss). Found, it counts as used.
  std::optional<KeptScan> Find() const;

  // Whether `inputs`, gathered from `kept`'s scan, are the inputs it was kept with.
  bool Holds(const KeptScan& kept, const CompileInputs& inputs) const;

  // Keeps `scan` and the digest of `inputs` gathered from it, then prunes the entry's
  // directory to its share of `max_bytes` (the cache's bound). A scan whose search list could
  // not be read, or that names a path it cannot keep, is not kept (OK).
  absl::Status Keep(const cc::DependencyScan& scan, const CompileInputs& inputs,
                    uint64_t max_bytes) const;

  const std::string& path() const { return path_; }

 private:
  ScanCache(std::optional<cc::BaseDir> base_dir, std::string path)
      : base_dir_(std::move(base_dir)), path_(std::move(path)) {}

  // The tree's digest with the base dir as its stand-in; empty when it has none.
  std::string TreeKey(const CompileInputs& inputs) const;

  std::optional<cc::BaseDir> base_dir_;  // set when the working directory lies under it
  std::string path_;                     // the entry's file
};

// Removes the least recently used entries (by mtime: finding an entry touches it) of the
// directory holding `entry_path`, one of the cache's 256, until they hold at most 3/4 of its
// share of `max_bytes`, once they hold more than it. Only entries, by their 64-hex names:
// another call's temporary file is left alone.
void PruneScanCacheDirectory(const std::string& entry_path, uint64_t max_bytes);

}  // namespace farm
