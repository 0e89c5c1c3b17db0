// PEP 440 version specifiers over numeric release versions (">=2.27,<3", "==9.*", "~=2.27"):
// what a recipe's prerequisite `version` says, checked against the version of the wheel that
// provides it. Pre-release, post-release and local parts are not written in specifiers; in an
// installed version only its leading release counts ("2.27.7.post1" and "2.27.7+cu13" are
// 2.27.7), which is what the nvidia-* wheels' versions need.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

class VersionSpecifier {
 public:
  // INVALID_ARGUMENT, saying what to write, for anything but comma-separated clauses of
  // ==, !=, >=, <=, >, <, ~= and a numeric release (== and != also take a trailing ".*").
  static absl::StatusOr<VersionSpecifier> Parse(absl::string_view text);

  // Whether `version` meets every clause. INVALID_ARGUMENT when it has no numeric release.
  absl::StatusOr<bool> Matches(absl::string_view version) const;

  const std::string& text() const { return text_; }

 private:
  struct Clause {
    std::string op;            // "==", "!=", ">=", "<=", ">", "<", "~="
    std::vector<int> release;  // 2.27 -> {2, 27}
    bool prefix = false;       // "==2.27.*"
  };
  std::string text_;
  std::vector<Clause> clauses_;
};

// The leading numeric release of a version: "2.27.7.post1" -> {2, 27, 7}; an epoch ("1!")
// is an error.
absl::StatusOr<std::vector<int>> ReleaseOf(absl::string_view version);

}  // namespace farm
