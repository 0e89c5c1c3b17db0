// PEP 440 versions in full (epoch, release, pre-, post-, dev-release, local label), for
// comparing the versions of published files the way pip and PyPI do: "2.0", "v2.0",
// "2.0.0" and "2.00" are one release; "1.0-alpha_1" is "1.0a1". (version_specifier.h
// covers the numeric releases that recipe prerequisites use.)
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

struct Pep440Version {
  // Numbers are kept as digit strings without leading zeros: PEP 440 sets no size limit
  // (date-based releases such as 20240101.1 are common).
  std::string epoch = "0";
  std::vector<std::string> release;  // "2.01.0" -> {"2", "1", "0"}
  std::string pre_label;             // "a", "b" or "rc"; empty when not a pre-release
  std::string pre_number;
  std::string post;   // empty when not a post-release
  std::string dev;    // empty when not a dev release
  std::string local;  // lowercased, "." separated; empty when absent

  // The normal form PEP 440 defines: "1!2.0rc1.post2.dev3+ubuntu.1".
  std::string Normalized() const;
  // The normal form less the release's trailing zeros ("2.0.0" -> "2"), as
  // packaging.utils.canonicalize_version and PyPI's releases use it: two versions are one
  // release exactly when their canonical forms are equal.
  std::string Canonical() const;
};

// INVALID_ARGUMENT, quoting `text`, when it is not a PEP 440 version.
absl::StatusOr<Pep440Version> ParsePep440Version(absl::string_view text);

}  // namespace farm
