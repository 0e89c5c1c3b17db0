#include "coordinator/compile_cache/compile_result_table.h"

#include <algorithm>

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

// The stored key: the key is 64 characters, so no two (scope, key) pairs share one.
std::string StoredKey(const std::string& scope, const std::string& key) {
  return absl::StrCat(scope, "/", key);
}

}  // namespace

absl::StatusOr<farm::v1::CompileResult> CompileResultTable::Get(
    const std::vector<std::string>& scopes, const std::string& key) {
  if (!IsHexSha256(key)) {
    return absl::InvalidArgumentError("a compile cache key is 64 lowercase hex digits");
  }
  absl::Status missing = absl::NotFoundError(absl::StrCat("no compile cache entry ", key));
  for (const std::string& scope : scopes) {
    farm::v1::CompileResult result;
    absl::Status got = store_->Get(Table::kCompileCache, StoredKey(scope, key), &result);
    if (absl::IsNotFound(got)) continue;
    FARM_RETURN_IF_ERROR(got);
    const auto evicted =
        std::find_if(result.outputs().begin(), result.outputs().end(),
                     [&](const auto& out) { return !blobs_->Contains(out.digest()); });
    if (evicted == result.outputs().end()) return result;
    missing = absl::NotFoundError(absl::StrCat("compile cache entry ", key, ": output '",
                                               evicted->path(), "' was evicted from the CAS"));
  }
  return missing;
}

absl::Status CompileResultTable::Put(const std::string& scope, const std::string& key,
                                     const farm::v1::CompileResult& result) {
  if (scope.empty()) {
    return absl::InvalidArgumentError(
        "this caller writes no compile cache entries. Fix: a farm build's farm-nvcc or an "
        "admin writes them");
  }
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
  return store_->Put(Table::kCompileCache, StoredKey(scope, key), result);
}

}  // namespace farm::coordinator
