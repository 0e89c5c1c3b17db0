#include "coordinator/wheels/source_uploads.h"

#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/digest/digest.h"
#include "libfarm/recipes/source_archive_name.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {

absl::StatusOr<std::map<std::string, farm::v1::SourceUpload>> SourceUploadsByRecipe(
    const farm::v1::SubmitBuildRequest& request, const std::vector<std::string>& refs) {
  std::map<std::string, farm::v1::SourceUpload> out;
  std::vector<std::string> names;
  for (const std::string& ref : refs) {
    // A ref that does not parse is refused by its own planning, with the reason.
    if (auto parsed = ParseRecipeRef(ref); parsed.ok()) names.push_back(parsed->name);
  }
  const bool stack = request.stack_size() > 0;
  if (request.has_source() && request.sources().empty()) {
    // The single form of older clients: an unnamed tree for the one package.
    if (stack) {
      return absl::InvalidArgumentError(
          "a stack takes its sources by name: the tree sent names no package of it. Fix: "
          "farmctl submit A-1.0 B-2.0 --source A=DIR (one --source NAME=PATH per package)");
    }
    if (names.empty()) return out;
    farm::v1::SourceUpload tree;
    tree.set_recipe(names.front());
    *tree.mutable_files() = request.source();
    out.emplace(names.front(), std::move(tree));
    return out;
  }
  if (!request.sources().empty() && !request.source().empty()) {
    return absl::InvalidArgumentError(
        "the request has both an unnamed source tree and named sources. Fix: send one form "
        "(farmctl submit does)");
  }
  const std::string known = names.empty() ? "none" : absl::StrJoin(names, ", ");
  for (const farm::v1::SourceUpload& upload : request.sources()) {
    const std::string name = absl::CHexEscape(upload.recipe());
    if (std::find(names.begin(), names.end(), upload.recipe()) == names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--source names '", name, "', which is not a package of this submit (",
                       known, "). Fix: --source NAME=PATH with NAME one of those recipe names"));
    }
    if (out.count(upload.recipe()) > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--source names '", name, "' twice; each package builds one source. Fix: give it once"));
    }
    const bool archive = upload.has_archive();
    if (archive == (upload.files_size() > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the source sent for '", name, "' is ",
                       archive ? "both a tree and an archive" : "neither a tree nor an archive",
                       ". Fix: point --source at a directory or at one archive file"));
    }
    out.emplace(upload.recipe(), upload);
  }
  return out;
}

absl::StatusOr<CheckedArchive> CheckUploadedArchive(const farm::v1::SourceArchive& archive,
                                                    const Recipe& recipe,
                                                    const RecipeVersion& version,
                                                    BlobStore* blobs) {
  if (absl::Status s = CheckSourceArchiveName(archive.file_name()); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the uploaded source: ", s.message(),
                     ". Fix: pass --source a .tar.gz (or .tar.xz, .tar.bz2) file or a directory"));
  }
  if (absl::Status s = ValidateDigest(archive.digest()); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the uploaded archive ", archive.file_name(), ": ", s.message()));
  }
  auto stored = blobs->Lookup(archive.digest());
  if (!stored.ok() || stored->size_bytes() != archive.digest().size_bytes()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the archive ", archive.file_name(), " (", DigestToString(archive.digest()),
        ") is not in the CAS. Fix: upload it first (farmctl submit --source does this)"));
  }
  // The CAS hashed the bytes on upload; hashing them again here makes what the plan says and
  // what the recipe's sha256 is compared with the bytes the build will get, whatever the
  // request claims and whatever happened to the file since.
  FARM_ASSIGN_OR_RETURN(const std::string path, blobs->PathOf(*stored));
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest actual, DigestOfFile(path));
  if (!SameDigest(actual, *stored)) {
    return absl::DataLossError(absl::StrCat(
        "the CAS's copy of ", archive.file_name(), " hashes to ", DigestToString(actual), ", not ",
        DigestToString(*stored), ". Fix: upload it again; check the coordinator's disk"));
  }
  CheckedArchive out{.file_name = archive.file_name(),
                     .sha256 = actual.hash(),
                     .size = static_cast<uint64_t>(actual.size_bytes())};
  const RecipeSource& source = version.source;
  if (source.kind == RecipeSource::Kind::kArchive && !source.archive_sha256.empty()) {
    if (source.archive_sha256 != out.sha256) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the archive ", out.file_name, " has sha256 ", out.sha256, ", but recipe '", recipe.name,
          "' ", version.version, " names sha256 ", source.archive_sha256, " (", recipe.file,
          "): refused, nothing was queued. Fix: check that it is the release's "
          "archive (sha256sum ",
          out.file_name,
          "), or correct the recipe's sha256 if this "
          "archive is the one to build"));
    }
    out.recipe_sha256 = true;
  }
  out.input.set_path(kSourceArchiveInput);
  *out.input.mutable_digest() = actual;
  return out;
}

std::string DescribeUploadedArchive(const CheckedArchive& archive, const RecipeVersion& version,
                                    const std::string& recipe_source) {
  return absl::StrCat("archive ", archive.file_name, " (", FormatByteSize(archive.size),
                      ", sha256 ", archive.sha256,
                      archive.recipe_sha256 ? " as the recipe names it" : "",
                      "; built without network)",
                      version.source.kind == RecipeSource::Kind::kUpload
                          ? " (--source)"
                          : absl::StrCat(" (--source, in place of ", recipe_source, ")"));
}

}  // namespace farm::coordinator
