#include "coordinator/compile_cache/compile_result_table.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

constexpr int kMaxDependencies = 100000;
constexpr int kMaxOutputs = 64;
constexpr size_t kMaxTextBytes = 1 << 20;

bool IsHexSha256(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<farm::v1::CompileResult> CompileResultTable::Get(const std::string& key) {
  if (!IsHexSha256(key)) {
    return absl::InvalidArgumentError("a compile cache key is 64 lowercase hex digits");
  }
  farm::v1::CompileResult result;
  FARM_RETURN_IF_ERROR(store_->Get(Table::kCompileCache, key, &result));
  for (const auto& out : result.outputs()) {
    if (!blobs_->Contains(out.digest())) {
      return absl::NotFoundError(absl::StrCat("compile cache entry ", key, ": output '", out.path(),
                                              "' was evicted from the CAS"));
    }
  }
  return result;
}

absl::Status CompileResultTable::Put(const std::string& key,
                                     const farm::v1::CompileResult& result) {
  if (!IsHexSha256(key)) {
    return absl::InvalidArgumentError("a compile cache key is 64 lowercase hex digits");
  }
  if (result.dependencies_size() > kMaxDependencies || result.outputs_size() > kMaxOutputs ||
      result.outputs_size() == 0 || result.stdout_text().size() > kMaxTextBytes ||
      result.stderr_text().size() > kMaxTextBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a compile cache entry has 1 to ", kMaxOutputs, " outputs, at most ", kMaxDependencies,
        " dependencies and at most ", kMaxTextBytes, " bytes of output text"));
  }
  for (const auto& dep : result.dependencies()) {
    if (dep.path().empty() || dep.path()[0] != '/' || !IsHexSha256(dep.sha256())) {
      return absl::InvalidArgumentError(
          absl::StrCat("dependency '", dep.path(), "': needs an absolute path and a hex sha256"));
    }
  }
  for (const auto& out : result.outputs()) {
    if (out.path().empty()) return absl::InvalidArgumentError("an output without a path");
    if (absl::Status s = ValidateDigest(out.digest()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("output '", out.path(), "': ", s.message()));
    }
    // The client's digest is only a name here: the CAS verified the bytes when they came in.
    if (!blobs_->Contains(out.digest())) {
      return absl::FailedPreconditionError(
          absl::StrCat("output '", out.path(), "' is not in the CAS. Fix: upload it first"));
    }
  }
  return store_->Put(Table::kCompileCache, key, result);
}

}  // namespace farm::coordinator
