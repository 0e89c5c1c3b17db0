// farm-cc's base directory (FARM_CC_BASEDIR, as ccache's base_dir): the directory a build's
// sources and build tree lie in. farm-cc's cross-tree cache names it by a fixed stand-in
// (kBaseDirStandIn) in its keys and in the text it stores, so the same sources in another
// checkout or build tree find the entry. Every rewrite either changes a path that provably
// lies under the base dir or refuses: a word that names it some other way (inside a macro's
// value, through '..') keeps the compile out of the cross-tree cache.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/actions.pb.h"

namespace farm::cc {

inline constexpr char kBaseDirStandIn[] = "/farm-cc-base";

class BaseDir {
 public:
  // INVALID_ARGUMENT, with the fix, for a path that is not absolute and normal, is "/", or
  // holds a character outside [A-Za-z0-9._+~/-] (Make would escape it in a dependency file).
  static absl::StatusOr<BaseDir> Create(const std::string& path);

  const std::string& path() const { return path_; }

  // Whether `path` (absolute) is the base dir or lies under it.
  bool Holds(absl::string_view path) const;
  // `path` with the stand-in for the base dir when Holds(path); otherwise as it is.
  std::string ToStandIn(absl::string_view path) const;
  // The other way: a path under the stand-in with the base dir for it.
  std::string FromStandIn(absl::string_view path) const;

  // An argument, or an environment value (one path or a ':' list), of a compile whose working
  // directory the base dir holds: each path in it
  // under the base dir, at the word's start, after an option's letters ("-I", "-isystem"...)
  // or after '=' / ':', gets the stand-in. FAILED_PRECONDITION with the reason for a word
  // that names the base dir elsewhere, a macro definition that names it, or a path with a
  // '..' that is relative or leads out of or into the base dir.
  absl::StatusOr<std::string> ToStandInWord(absl::string_view word) const;

  // A tree's paths (relative to "/") and absolute link targets with the stand-in.
  // FAILED_PRECONDITION when a path outside the base dir is the stand-in's, or a relative
  // link target leaves the base dir (the tree would mean other files under the stand-in).
  absl::StatusOr<farm::v1::FileTree> ToStandInTree(const farm::v1::FileTree& tree) const;

  // Text (a compile's diagnostics): every occurrence of the base dir and back. Diagnostics
  // are not wrapped by width, so this gives what the compiler writes in the other tree.
  std::string TextToStandIn(absl::string_view text) const;
  std::string TextFromStandIn(absl::string_view text) const;

  // Whether `bytes` (an object) hold the base dir's name, as UTF-8, UTF-16LE or UTF-32LE: a
  // compile whose object records where it was built has no answer for another tree.
  bool IsNamedIn(absl::string_view bytes) const;

 private:
  explicit BaseDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace farm::cc
