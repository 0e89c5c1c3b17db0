// farmctl submit --source: what each value names, checked before anything is uploaded or
// submitted. `--source PATH` (one package) or `--source NAME=PATH` (repeatable: a package of
// the submit by recipe name, in a stack or alone); PATH a directory (its tree is sent) or a
// source archive file (sent as one blob, unpacked by the build host). An archive with a
// `SHA256SUMS` file beside it (sha256sum's format) that lists it must have that digest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm::cli {

struct SourceArg {
  std::string recipe;  // the package's recipe name; "" for the single form `--source PATH`
  std::string path;
  bool archive = false;  // PATH is an archive file, not a directory (ClassifySources)
};

// "NAME=PATH" when the part before the first '=' is a recipe name (letters, digits, '.', '_',
// '-') and the whole value names nothing on disk (a path with '=' in it stays a path); else
// "PATH".
SourceArg ParseSourceArg(const std::string& value);

// The --source values for the packages `refs` ("<recipe>-<version>"), each with its recipe
// and kind: the single form only with one package (it is that one's); NAME one of the refs'
// recipes, each once; PATH an existing directory or a file named like a source archive
// (.tar.gz, .tgz, .tar.xz, .txz, .tar.bz2, .tbz2). INVALID_ARGUMENT (NOT_FOUND for a missing
// path) naming the value and the fix otherwise.
absl::StatusOr<std::vector<SourceArg>> ClassifySources(const std::vector<std::string>& values,
                                                       const std::vector<std::string>& refs);

// sha256sum's lines ("HEX  NAME", "HEX *NAME" in binary mode; blank lines skipped) as name ->
// lowercase hex. INVALID_ARGUMENT naming the line for anything else.
absl::StatusOr<std::map<std::string, std::string>> ParseSha256Sums(const std::string& text);

// The sha256 the `SHA256SUMS` beside `archive` lists for its file name: nullopt when there is
// no such file or it does not list the archive; an error when it cannot be read or parsed.
absl::StatusOr<std::optional<std::string>> ListedSha256(const std::string& archive);

// Checks `archive`'s bytes against ListedSha256: its sha256 (computed here), or
// FAILED_PRECONDITION naming both digests, the SHA256SUMS file and the fix. `listed` says
// whether SHA256SUMS listed it.
absl::StatusOr<std::string> CheckArchiveAgainstSums(const std::string& archive, bool* listed);

}  // namespace farm::cli
