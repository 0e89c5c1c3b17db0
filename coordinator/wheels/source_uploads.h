// What `farmctl submit --source` sent for the packages of one submit: a tree or an archive per
// recipe (SubmitBuildRequest.sources, or the older single `source` tree), and an uploaded
// archive checked as a build's input. All of it is the client's word: names and digests are
// checked here, and an archive's sha256 is computed from the bytes the CAS holds, never taken
// from the request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/recipes/recipe.h"

namespace farm::coordinator {

// The uploads of `request` by recipe name, for its packages `refs` ("<recipe>-<version>").
// The older single `source` tree (has_source without `sources`) belongs to the one package.
// INVALID_ARGUMENT naming the fix for: a recipe that is not one of `refs` or is named twice,
// an upload with both or neither of a tree and an archive, a tree without a name in a stack,
// and `source` given beside `sources`.
absl::StatusOr<std::map<std::string, farm::v1::SourceUpload>> SourceUploadsByRecipe(
    const farm::v1::SubmitBuildRequest& request, const std::vector<std::string>& refs);

// An uploaded archive as a build input (at kSourceArchiveInput), with what the plan says of it.
struct CheckedArchive {
  farm::v1::InputFile input;
  std::string file_name;
  std::string sha256;  // of the bytes in the CAS
  uint64_t size = 0;
  bool recipe_sha256 = false;  // the recipe named this sha256 (and it matched)
};

// Checks `archive` (its name a plain source archive name, its blob in the CAS with that size,
// its bytes hashing to its digest) and, when `version`'s source is kind "archive" and names a
// sha256, that the bytes have it: FAILED_PRECONDITION naming both digests otherwise, before
// anything is queued. INVALID_ARGUMENT for a bad name or digest, FAILED_PRECONDITION for a
// blob the CAS does not hold.
absl::StatusOr<CheckedArchive> CheckUploadedArchive(const farm::v1::SourceArchive& archive,
                                                    const Recipe& recipe,
                                                    const RecipeVersion& version, BlobStore* blobs);

// The plan's source line: "archive NAME (SIZE, sha256 HEX)", then what it replaces.
std::string DescribeUploadedArchive(const CheckedArchive& archive, const RecipeVersion& version,
                                    const std::string& recipe_source);

}  // namespace farm::coordinator
