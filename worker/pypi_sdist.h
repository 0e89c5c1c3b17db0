// A recipe's PyPI source distribution (source kind "pypi"). The worker fetches it before the
// build, with the network and nothing of the package's running: pypi_sdist.py finds
// `<project>-<version>.tar.gz` on the build host's index and checks it against the index's
// sha256. The build's sandbox, without network, then unpacks it (UnpackArgv) and builds it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace farm::worker {

// pypi_sdist.py's text (compiled in from worker/pypi_sdist.py).
std::string_view PypiSdistScript();

// Where a fetched sdist and the script that unpacks it sit in a build's tree (action inputs),
// and the build step that unpacks the one into `src`.
inline constexpr char kSdistInput[] = ".wheelfarm/sdist.tar.gz";
inline constexpr char kSdistScriptInput[] = ".wheelfarm/pypi_sdist.py";
std::vector<std::string> UnpackArgv();

// The index an sdist comes from: the recipe's, else the build host's PIP_INDEX_URL (its
// mirror), else PyPI.
std::string SdistIndexUrl(const std::string& recipe_index, const std::string& pip_index_url);

struct FetchedSdist {
  std::string path;  // in the fetch directory
  std::string file;  // "deepspeed-0.18.9.tar.gz"
  std::string url;
  std::string sha256;
  uint64_t size = 0;
};

// Fetches `project`==`version`'s sdist from `index` into `dir` (created) with `python` (the
// recipe's interpreter, standard library only). Errors are the script's one line: no such
// sdist (with those on offer), no hash, a hash mismatch, the index unreachable; each with a fix.
absl::StatusOr<FetchedSdist> FetchSdist(const std::string& python, const std::string& index,
                                        const std::string& project, const std::string& version,
                                        const std::string& dir);

}  // namespace farm::worker
