#include "coordinator/cas/missing_blobs.h"

#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {

absl::StatusOr<std::vector<farm::v1::Digest>> MissingBlobs(
    BlobStore& store, const google::protobuf::RepeatedPtrField<farm::v1::Digest>& digests,
    const google::protobuf::RepeatedPtrField<farm::v1::Digest>& trees) {
  if (trees.size() > static_cast<int>(kCasFindMissingBatch)) {
    return absl::InvalidArgumentError(absl::StrCat("FindMissing names ", trees.size(),
                                                   " trees; the limit is ", kCasFindMissingBatch,
                                                   ". Fix: ask about fewer trees at once"));
  }
  for (const auto& d : digests) FARM_RETURN_IF_ERROR(ValidateDigest(d));
  for (const auto& d : trees) FARM_RETURN_IF_ERROR(ValidateDigest(d));
  std::vector<farm::v1::Digest> missing;
  std::unordered_set<std::string> asked;
  auto check = [&](const farm::v1::Digest& d) {
    if (asked.insert(d.hash()).second && !store.Contains(d)) missing.push_back(d);
  };
  for (const auto& d : digests) check(d);
  int64_t tree_bytes = 0;
  for (const auto& tree : trees) {
    absl::StatusOr<std::string> bytes = store.Read(tree, kMaxFileTreeBytes - tree_bytes);
    if (absl::IsNotFound(bytes.status())) {
      if (asked.insert(tree.hash()).second) missing.push_back(tree);
      continue;
    }
    if (absl::IsResourceExhausted(bytes.status())) {
      return absl::InvalidArgumentError(absl::StrCat("FindMissing's trees add up to more than ",
                                                     kMaxFileTreeBytes,
                                                     " bytes. Fix: ask about fewer trees at once"));
    }
    if (!bytes.ok()) return bytes.status();
    asked.insert(tree.hash());
    tree_bytes += static_cast<int64_t>(bytes->size());
    farm::v1::FileTree parsed;
    if (!parsed.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("FindMissing tree ", tree.hash(), " is not a farm.v1.FileTree"));
    }
    for (const farm::v1::InputFile& entry : parsed.files()) {
      // Links and empty directories name no blob.
      if (entry.digest().hash().empty()) continue;
      FARM_RETURN_IF_ERROR(ValidateDigest(entry.digest()));
      check(entry.digest());
    }
  }
  return missing;
}

}  // namespace farm::coordinator
