#include "coordinator/wheels/source_tree.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/relative_path.h"
#include "libfarm/files/source_tree_walk.h"

namespace farm::coordinator {
absl::StatusOr<std::vector<farm::v1::InputFile>> IngestSourceTree(const std::string& dir,
                                                                  BlobStore* blobs) {
  std::vector<farm::v1::InputFile> out;
  absl::Status walked = WalkSourceTree(dir, [&](const SourceTreeFile& f) -> absl::Status {
    std::ifstream in(f.path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", f.path));
    auto digest = blobs->PutBytes(bytes.str());
    if (!digest.ok()) return digest.status();
    farm::v1::InputFile file;
    file.set_path(absl::StrCat(kSourcePrefix, f.relative));
    *file.mutable_digest() = *digest;
    file.set_executable(f.executable);
    out.push_back(std::move(file));
    return absl::OkStatus();
  });
  if (!walked.ok()) return walked;
  return out;
}

absl::StatusOr<std::vector<farm::v1::InputFile>> CheckUploadedSource(
    const std::vector<farm::v1::InputFile>& files, BlobStore* blobs) {
  if (files.empty()) {
    return absl::FailedPreconditionError(
        "the uploaded source tree has no files. Fix: point --source at the package's root");
  }
  std::set<std::string> seen;
  std::vector<farm::v1::InputFile> out;
  for (const auto& f : files) {
    if (absl::Status s = ValidateRelativePath(f.path()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("source file ", s.message()));
    }
    if (!seen.insert(f.path()).second) {
      return absl::InvalidArgumentError(absl::StrCat("source file '", f.path(), "' appears twice"));
    }
    // The CAS verified each blob against its digest on upload; the size must match too.
    auto stored = blobs->Lookup(f.digest());
    if (!stored.ok() || stored->size_bytes() != f.digest().size_bytes()) {
      return absl::FailedPreconditionError(
          absl::StrCat("source file '", f.path(), "' (", f.digest().hash(),
                       ") is not in the CAS. Fix: upload it first (farmctl submit --source "
                       "does this)"));
    }
    farm::v1::InputFile in = f;
    in.set_path(absl::StrCat(kSourcePrefix, f.path()));
    out.push_back(std::move(in));
  }
  return out;
}

std::string SourceTreeDigest(std::vector<farm::v1::InputFile> files) {
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.path() < b.path(); });
  farm::v1::Action tree;  // only its inputs: a message DigestOfMessage serializes stably
  for (auto& f : files) *tree.add_inputs() = std::move(f);
  return DigestOfMessage(tree).hash();
}

}  // namespace farm::coordinator
