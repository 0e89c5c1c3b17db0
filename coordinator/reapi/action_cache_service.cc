#include "coordinator/reapi/action_cache_service.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "coordinator/reapi/request_checks.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator::reapi {
namespace {

// An output directory's Tree is read to check the files in it; a larger one is no result
// this farm serves (a Tree of ~100,000 files).
constexpr int64_t kMaxTreeBytes = 16 << 20;

// Output paths are relative to the action's working directory: not empty, not absolute, no
// empty, '.' or '..' segment, so a client restoring them never writes outside its tree.
absl::Status CheckOutputPath(const std::string& path, absl::string_view what) {
  bool bad = path.empty() || path.front() == '/';
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    if (segment.empty() || segment == "." || segment == "..") bad = true;
  }
  if (!bad) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " path '", path.substr(0, 200),
      "' is not a relative path of plain segments (no leading '/', no empty, '.' or '..' "
      "segment); nothing was stored. Fix: name outputs relative to the action's working "
      "directory"));
}

// GetCapabilities advertises DISALLOWED: a symlink output points inside the tree.
absl::Status CheckSymlink(const rev2::OutputSymlink& link) {
  FARM_RETURN_IF_ERROR(CheckOutputPath(link.path(), "output symlink"));
  if (link.target().empty() || link.target().front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("output symlink '", link.path().substr(0, 200),
                     "' has an empty or absolute target, which "
                     "this farm does not store (symlink_absolute_path_strategy DISALLOWED)"));
  }
  return absl::OkStatus();
}

// Every digest `result` names, with what it is for the messages; checked as ToFarmDigest does.
absl::StatusOr<std::vector<std::pair<std::string, farm::v1::Digest>>> NamedBlobs(
    const rev2::ActionResult& result) {
  std::vector<std::pair<std::string, farm::v1::Digest>> blobs;
  auto add = [&](std::string what, const rev2::Digest& d) -> absl::Status {
    absl::StatusOr<farm::v1::Digest> digest = ToFarmDigest(d);
    if (!digest.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", digest.status().message()));
    }
    blobs.emplace_back(std::move(what), *std::move(digest));
    return absl::OkStatus();
  };
  for (const rev2::OutputFile& f : result.output_files()) {
    FARM_RETURN_IF_ERROR(
        add(absl::StrCat("output file '", f.path().substr(0, 200), "'"), f.digest()));
  }
  for (const rev2::OutputDirectory& d : result.output_directories()) {
    FARM_RETURN_IF_ERROR(
        add(absl::StrCat("output directory '", d.path().substr(0, 200), "'"), d.tree_digest()));
  }
  if (result.has_stdout_digest()) FARM_RETURN_IF_ERROR(add("stdout", result.stdout_digest()));
  if (result.has_stderr_digest()) FARM_RETURN_IF_ERROR(add("stderr", result.stderr_digest()));
  return blobs;
}

absl::Status CheckPaths(const rev2::ActionResult& result) {
  for (const rev2::OutputFile& f : result.output_files()) {
    FARM_RETURN_IF_ERROR(CheckOutputPath(f.path(), "output file"));
  }
  for (const rev2::OutputDirectory& d : result.output_directories()) {
    FARM_RETURN_IF_ERROR(CheckOutputPath(d.path(), "output directory"));
  }
// API 2.0 clients (the level advertised) name symlinks in the fields 2.1 deprecated.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  for (const auto* links : {&result.output_file_symlinks(), &result.output_directory_symlinks(),
                            &result.output_symlinks()}) {
    for (const rev2::OutputSymlink& link : *links) FARM_RETURN_IF_ERROR(CheckSymlink(link));
  }
#pragma GCC diagnostic pop

  return absl::OkStatus();
}

}  // namespace

ActionCacheService::ActionCacheService(const RpcGate* gate, StateStore* state, BlobStore* blobs,
                                       MetricsRegistry* metrics)
    : gate_(gate),
      state_(state),
      blobs_(blobs),
      hits_(metrics->GetCounter("farm_reapi_action_cache_lookups_total",
                                "REAPI GetActionResult calls, by outcome.", {{"result", "hit"}})),
      misses_(metrics->GetCounter("farm_reapi_action_cache_lookups_total",
                                  "REAPI GetActionResult calls, by outcome.",
                                  {{"result", "miss"}})),
      incomplete_(metrics->GetCounter("farm_reapi_action_cache_lookups_total",
                                      "REAPI GetActionResult calls, by outcome.",
                                      {{"result", "incomplete"}})),
      updates_(metrics->GetCounter("farm_reapi_action_cache_updates_total",
                                   "ActionResults stored by REAPI UpdateActionResult.")) {}

grpc::Status ActionCacheService::GetActionResult(grpc::ServerContext* context,
                                                 const rev2::GetActionResultRequest* request,
                                                 rev2::ActionResult* response) {
  return gate_->Serve(*context, "ActionCache.GetActionResult",
                      [&] { return Lookup(*request, response); });
}

grpc::Status ActionCacheService::UpdateActionResult(grpc::ServerContext* context,
                                                    const rev2::UpdateActionResultRequest* request,
                                                    rev2::ActionResult* response) {
  return gate_->Serve(*context, "ActionCache.UpdateActionResult",
                      [&] { return Store(*request, response); });
}

absl::Status ActionCacheService::Lookup(const rev2::GetActionResultRequest& request,
                                        rev2::ActionResult* response) {
  FARM_RETURN_IF_ERROR(CheckInstanceName(request.instance_name()));
  FARM_RETURN_IF_ERROR(CheckDigestFunction(request.digest_function()));
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest action, ToFarmDigest(request.action_digest()));
  rev2::ActionResult result;
  absl::Status got = state_->Get(Table::kReapiActionCache, action.hash(), &result);
  if (absl::IsNotFound(got)) {
    misses_->Increment();
    return absl::NotFoundError(absl::StrCat("no action result for action ", action.hash()));
  }
  FARM_RETURN_IF_ERROR(got);
  if (absl::Status complete = CheckComplete(result); !complete.ok()) {
    // The client runs the action and uploads again, which makes the entry whole.
    incomplete_->Increment();
    return complete;
  }
  hits_->Increment();
  *response = std::move(result);
  return absl::OkStatus();
}

absl::Status ActionCacheService::Store(const rev2::UpdateActionResultRequest& request,
                                       rev2::ActionResult* response) {
  FARM_RETURN_IF_ERROR(CheckInstanceName(request.instance_name()));
  FARM_RETURN_IF_ERROR(CheckDigestFunction(request.digest_function()));
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest action, ToFarmDigest(request.action_digest()));
  const rev2::ActionResult& result = request.action_result();
  if (result.ByteSizeLong() > kMaxActionResultBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the action result is ", result.ByteSizeLong(),
                     " bytes serialized; this farm stores at "
                     "most ",
                     kMaxActionResultBytes,
                     ". Fix: put large stdout/stderr in the CAS "
                     "(stdout_digest, stderr_digest) instead of inline"));
  }
  FARM_RETURN_IF_ERROR(CheckPaths(result));
  if (absl::Status complete = CheckComplete(result); !complete.ok()) {
    if (!absl::IsNotFound(complete)) return complete;
    // The spec's status for a result naming blobs the server lacks.
    return absl::FailedPreconditionError(absl::StrCat(
        complete.message(), "; nothing was stored. Fix: upload the outputs to the CAS first"));
  }
  FARM_RETURN_IF_ERROR(state_->Put(Table::kReapiActionCache, action.hash(), result));
  updates_->Increment();
  *response = result;
  return absl::OkStatus();
}

absl::Status ActionCacheService::CheckComplete(const rev2::ActionResult& result) {
  FARM_ASSIGN_OR_RETURN(const auto blobs, NamedBlobs(result));
  for (const auto& [what, digest] : blobs) {
    if (!IsEmptyBlob(digest) && !blobs_->Contains(digest)) {
      return absl::NotFoundError(absl::StrCat(what, " (blob ", digest.hash(), "/",
                                              digest.size_bytes(), ") is not in the CAS"));
    }
    if (!IsEmptyBlob(digest)) blobs_->Touch(digest.hash());
  }
  // An output directory is whole when the files its Tree names are too.
  for (const rev2::OutputDirectory& d : result.output_directories()) {
    FARM_ASSIGN_OR_RETURN(const farm::v1::Digest tree_digest, ToFarmDigest(d.tree_digest()));
    absl::StatusOr<std::string> bytes = blobs_->Read(tree_digest, kMaxTreeBytes);
    if (!bytes.ok())
      return absl::NotFoundError(
          absl::StrCat("output directory '", d.path(), "': ", bytes.status().message()));
    rev2::Tree tree;
    if (!tree.ParseFromString(*bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output directory '", d.path().substr(0, 200),
                       "': its tree_digest is not a build.bazel.remote.execution.v2.Tree"));
    }
    std::vector<const rev2::Directory*> dirs = {&tree.root()};
    for (const rev2::Directory& child : tree.children()) dirs.push_back(&child);
    for (const rev2::Directory* dir : dirs) {
      for (const rev2::FileNode& file : dir->files()) {
        FARM_ASSIGN_OR_RETURN(const farm::v1::Digest digest, ToFarmDigest(file.digest()));
        if (IsEmptyBlob(digest)) continue;
        if (!blobs_->Contains(digest)) {
          return absl::NotFoundError(absl::StrCat("file '", file.name().substr(0, 200),
                                                  "' of output directory '", d.path(), "' (blob ",
                                                  digest.hash(), ") is not in the CAS"));
        }
        blobs_->Touch(digest.hash());
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace farm::coordinator::reapi
