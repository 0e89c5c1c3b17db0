#include "libfarm/rpc/request_limits.h"

#include "absl/strings/str_cat.h"
#include "libfarm/text/utf8.h"

namespace farm {

absl::Status CheckFieldLength(absl::string_view field, absl::string_view value, size_t max) {
  if (value.size() <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, " is ", value.size(), " bytes; the limit is ", max,
      ". Fix: check the value (names, ids and arch lists are short; 'farmctl recipes' and "
      "'farmctl builds' list the real ones)"));
}

absl::Status CheckBuildId(absl::string_view build_id) {
  return CheckFieldLength("the build id", build_id, kMaxNameBytes);
}

absl::Status CheckSourceListSize(const std::string& dir, size_t files, size_t path_bytes) {
  const size_t list_bytes = path_bytes + files * kSourceListBytesPerFile;
  if (list_bytes <= kMaxSourceListBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the source tree ", dir, " has ", files, " files, a file list of about ", list_bytes >> 10,
      " KiB; a build's source list is at most ", kMaxSourceListBytes >> 10, " KiB (about ",
      kMaxSourceListBytes / (kSourceListBytesPerFile + 40),
      " files). Nothing was uploaded. Fix: submit the package's own tree, without vendored "
      "or generated files (.git, __pycache__, build/ and dist/ are skipped already), or build "
      "the recipe's source by leaving out --source"));
}

absl::Status CheckSubmitBuildRequest(const farm::v1::SubmitBuildRequest& r) {
  size_t list_bytes = 0;
  for (const auto& f : r.source()) list_bytes += f.ByteSizeLong() + 4;
  if (list_bytes > kMaxSourceListBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the source list is ", list_bytes, " bytes (", r.source_size(),
                     " files); the limit is ", kMaxSourceListBytes,
                     ". Fix: submit a smaller tree (farmctl checks this before uploading)"));
  }
  for (const auto& [field, value, max] : {std::tuple<const char*, const std::string&, size_t>{
                                              "the recipe name", r.recipe(), kMaxNameBytes},
                                          {"the arch list (--archs)", r.archs(), kMaxArchListBytes},
                                          {"--cpu-arch", r.cpu_arch(), kMaxNameBytes},
                                          {"--glibc-max", r.glibc_max(), kMaxNameBytes},
                                          {"--python", r.python(), kMaxNameBytes}}) {
    if (absl::Status s = CheckFieldLength(field, value, max); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckWorkerLabels(const farm::v1::WorkerCapabilities& capabilities) {
  if (static_cast<size_t>(capabilities.labels_size()) > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat("the worker has ", capabilities.labels_size(),
                                                   " labels; the limit is ", kMaxLabels,
                                                   ". Fix: pass fewer --labels"));
  }
  for (const auto& [key, value] : capabilities.labels()) {
    if (absl::Status s = CheckFieldLength("a label's key", key, kMaxLabelBytes); !s.ok()) return s;
    if (absl::Status s = CheckFieldLength(absl::StrCat("label '", key.substr(0, 64), "'"), value,
                                          kMaxLabelBytes);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::string BoundedErrorMessage(absl::string_view message) {
  if (message.size() <= kMaxErrorMessageBytes) return std::string(message);
  const absl::string_view kept = Utf8Prefix(message, kMaxErrorMessageBytes - 64);
  return absl::StrCat(kept, "… [", message.size() - kept.size(), " more bytes of this error cut]");
}

}  // namespace farm
