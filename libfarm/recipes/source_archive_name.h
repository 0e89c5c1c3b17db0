// Source archives by name: which files count as one (a recipe's `kind = "archive"` URL,
// `farmctl submit --source FILE`) and where a wheel build finds its archive. Shared by the
// recipe loader, farmctl, the coordinator and the worker, so they agree on both.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace farm {

// Where a wheel build's source archive sits in its tree (an action input): fetched by the
// worker or uploaded and handed over by the coordinator. No suffix: the unpack step tells the
// compressions apart by their bytes.
inline constexpr char kSourceArchiveInput[] = ".wheelfarm/source-archive";

// The tar archives the worker unpacks (gzip, xz, bzip2): ".tar.gz", ".tgz", ".tar.xz", ".txz",
// ".tar.bz2", ".tbz2". worker/source_archive.py keeps the same list.
const std::vector<std::string>& SourceArchiveSuffixes();

// `name` ends with one of them (any case).
bool HasSourceArchiveSuffix(absl::string_view name);

// A plain file name with such a suffix: letters, digits, '.', '_', '-', '+', not starting with
// '.'. INVALID_ARGUMENT naming what is wrong and the suffixes otherwise.
absl::Status CheckSourceArchiveName(absl::string_view name);

}  // namespace farm
