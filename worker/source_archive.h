// A recipe's source as one archive: a PyPI source distribution (source kind "pypi") or a
// release archive named by URL (kind "archive"), fetched by the worker before the build, with
// the network and nothing of the package's running; or an archive `farmctl submit --source
// FILE` uploaded, which the coordinator hands over as an input. source_archive.py finds
// `<project>-<version>.tar.gz` on the build host's index and checks it against the index's
// sha256, or downloads the URL and checks it against the recipe's sha256 when it names one.
// The build's sandbox, without network, then unpacks it (UnpackArgv) and builds it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/recipes/source_archive_name.h"

namespace farm::worker {

// source_archive.py's text (compiled in from worker/source_archive.py).
std::string_view SourceArchiveScript();

// Where the script that unpacks the archive (kSourceArchiveInput) sits in a build's tree (an
// action input), and the build step that unpacks the one into `src`.
inline constexpr char kSourceArchiveScriptInput[] = ".wheelfarm/source_archive.py";
std::vector<std::string> UnpackArgv();

// The index an sdist comes from: the recipe's, else the build host's PIP_INDEX_URL (its
// mirror), else PyPI.
std::string SdistIndexUrl(const std::string& recipe_index, const std::string& pip_index_url);

struct FetchedArchive {
  std::string path;  // in the fetch directory
  std::string file;  // "deepspeed-0.18.9.tar.gz", "v0.26.0.tar.gz"
  std::string url;
  std::string sha256;  // what the bytes hash to (checked against the index's or recipe's)
  uint64_t size = 0;
};

// Fetches `project`==`version`'s sdist from `index` into `dir` (created) with `python` (the
// recipe's interpreter, standard library only). Errors are the script's one line: no such
// sdist (with those on offer), no hash, a hash mismatch, the index unreachable; each with a fix.
absl::StatusOr<FetchedArchive> FetchSdist(const std::string& python, const std::string& index,
                                          const std::string& project, const std::string& version,
                                          const std::string& dir);

// Downloads the archive `url` names into `dir` (created), checked against `sha256` unless it
// is "" (the recipe names none: the result says what the bytes hash to). Errors are the
// script's one line: not http(s), no archive file name, unreachable, too large, or a hash
// mismatch naming both digests; each with a fix.
absl::StatusOr<FetchedArchive> DownloadArchive(const std::string& python, const std::string& url,
                                               const std::string& sha256, const std::string& dir);

}  // namespace farm::worker
