#include "coordinator/scheduler/action_key.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/requirements.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/relative_path.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

constexpr uint32_t kMaxTimeoutSeconds = 24 * 3600;
constexpr int kMaxSourceStamps = 4096;
constexpr size_t kMaxStampPathBytes = 4096;
constexpr uint64_t kMaxStampSizeBytes = uint64_t{1} << 40;

// An absolute, normalized path of at most 4096 bytes without NUL: a source stamp's, an image
// action's working directory and compiler.
bool IsAbsoluteNormalPath(const std::string& p) {
  return !p.empty() && p[0] == '/' && p.size() <= kMaxStampPathBytes &&
         p.find('\0') == std::string::npos &&
         std::filesystem::path(p).lexically_normal().string() == p;
}

absl::Status ValidateSourceStamps(const farm::v1::Action& action) {
  if (action.source_stamps_size() > kMaxSourceStamps) {
    return absl::InvalidArgumentError(absl::StrCat("action has ", action.source_stamps_size(),
                                                   " source stamps; the limit is ",
                                                   kMaxSourceStamps));
  }
  std::set<std::string> seen;
  for (const auto& stamp : action.source_stamps()) {
    const std::string& p = stamp.path();
    if (!IsAbsoluteNormalPath(p)) {
      return absl::InvalidArgumentError(absl::StrCat("source stamp path '", p.substr(0, 200),
                                                     "' is not an absolute, normalized path"));
    }
    if (!seen.insert(p).second) {
      return absl::InvalidArgumentError(absl::StrCat("source stamp '", p, "' appears twice"));
    }
    if (stamp.mtime_seconds() < 0 || stamp.size_bytes() > kMaxStampSizeBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("source stamp '", p, "' has a negative mtime or a size over 1 TiB"));
    }
  }
  return absl::OkStatus();
}

// farm-cc's actions: a root made of two trees, a working directory inside it, and a worker
// that can run the toolchain's binaries in a sandbox.
absl::Status ValidateImageAction(const farm::v1::Action& action) {
  const bool image = !action.working_directory().empty();
  if (!image) {
    if (action.has_toolchain() || action.has_input_tree()) {
      return absl::InvalidArgumentError(
          "an action with a toolchain or an input tree needs a working_directory (it is a "
          "filesystem image action)");
    }
    return absl::OkStatus();
  }
  if (action.has_wheel_build()) {
    return absl::InvalidArgumentError("a wheel build cannot be a filesystem image action");
  }
  if (!IsAbsoluteNormalPath(action.working_directory())) {
    return absl::InvalidArgumentError(absl::StrCat("working_directory '",
                                                   action.working_directory().substr(0, 200),
                                                   "' is not an absolute, normalized path"));
  }
  if (action.inputs_size() > 0) {
    return absl::InvalidArgumentError(
        "a filesystem image action takes its files from input_tree; inputs must be empty");
  }
  if (!action.has_toolchain() || !action.has_input_tree()) {
    return absl::InvalidArgumentError(
        "a filesystem image action needs a toolchain and an input_tree");
  }
  const farm::v1::HostToolchain& t = action.toolchain();
  FARM_RETURN_IF_ERROR(ValidateDigest(t.tree()));
  FARM_RETURN_IF_ERROR(ValidateDigest(action.input_tree()));
  if (!IsAbsoluteNormalPath(t.compiler())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "toolchain compiler '", t.compiler().substr(0, 200), "' is not an absolute path"));
  }
  const farm::v1::Requirements& r = action.requirements();
  if (t.cpu_arch().empty() || r.cpu_arch() != t.cpu_arch() || !r.sandbox()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a filesystem image action must require its toolchain's CPU arch ('",
                     t.cpu_arch(), "', requires '", r.cpu_arch(), "') and a sandbox"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ActionKey(const farm::v1::Action& action) {
  farm::v1::Action canonical;
  *canonical.mutable_argv() = action.argv();
  *canonical.mutable_env() = action.env();
  std::vector<farm::v1::InputFile> inputs(action.inputs().begin(), action.inputs().end());
  std::sort(inputs.begin(), inputs.end(),
            [](const auto& a, const auto& b) { return a.path() < b.path(); });
  for (auto& in : inputs) *canonical.add_inputs() = std::move(in);
  std::vector<std::string> outputs(action.output_paths().begin(), action.output_paths().end());
  std::sort(outputs.begin(), outputs.end());
  for (auto& out : outputs) canonical.add_output_paths(std::move(out));
  // Line info carries the sources' stamps, so they are part of what the action makes.
  std::vector<farm::v1::SourceStamp> stamps(action.source_stamps().begin(),
                                            action.source_stamps().end());
  std::sort(stamps.begin(), stamps.end(),
            [](const auto& a, const auto& b) { return a.path() < b.path(); });
  for (auto& stamp : stamps) *canonical.add_source_stamps() = std::move(stamp);
  const auto& r = action.requirements();
  auto* key_req = canonical.mutable_requirements();
  key_req->set_os(r.os());
  key_req->set_cpu_arch(r.cpu_arch());
  key_req->set_max_glibc(r.max_glibc());
  key_req->set_cuda_version(r.cuda_version());
  key_req->set_cuda_min(r.cuda_min());
  key_req->set_cuda_max(r.cuda_max());
  // Two patch releases of one CUDA version may compile the same input differently: a result
  // from 13.0.88 must never answer a 13.0.96 compile. Empty (no release asked) leaves the
  // serialization, and so every earlier key, unchanged.
  key_req->set_cuda_release(r.cuda_release());
  std::vector<std::string> sms(r.sms().begin(), r.sms().end());
  std::sort(sms.begin(), sms.end());
  for (auto& sm : sms) key_req->add_sms(std::move(sm));
  // A filesystem image action (farm-cc): its toolchain and its files by their trees' digests,
  // and where it runs. Unset for every other action, so their keys stay as they were.
  key_req->set_sandbox(r.sandbox());
  canonical.set_working_directory(action.working_directory());
  if (action.has_toolchain()) *canonical.mutable_toolchain() = action.toolchain();
  if (action.has_input_tree()) *canonical.mutable_input_tree() = action.input_tree();

  return DigestOfMessage(canonical).hash();
}

absl::Status ValidateAction(const farm::v1::Action& action) {
  // A wheel build's command is the recipe it carries, rendered by the build host.
  if (!action.has_wheel_build() && (action.argv().empty() || action.argv(0).empty())) {
    return absl::InvalidArgumentError("action has no command (argv is empty)");
  }
  if (action.history_key().size() > kMaxHistoryKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("history key of ", action.history_key().size(), " bytes; the limit is ",
                     kMaxHistoryKeyBytes, ". Fix: name the translation unit and arch only"));
  }
  if (const double hint = action.expected_seconds();
      !std::isfinite(hint) || hint < 0 || hint > 86400) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected seconds of ", hint,
                     " are not a time from 0 to 86400. Fix: send the seconds a run is expected "
                     "to take, or 0"));
  }
  std::set<std::string> seen;
  for (const auto& in : action.inputs()) {
    if (absl::Status s = ValidateRelativePath(in.path()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", s.message()));
    }
    if (!seen.insert(in.path()).second) {
      return absl::InvalidArgumentError(absl::StrCat("input path '", in.path(), "' appears twice"));
    }
    if (absl::Status s = ValidateDigest(in.digest()); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.path(), "': ", s.message()));
    }
  }
  std::set<std::string> outputs;
  for (const auto& out : action.output_paths()) {
    if (absl::Status s = ValidateRelativePath(out); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("output ", s.message()));
    }
    if (!outputs.insert(out).second) {
      return absl::InvalidArgumentError(absl::StrCat("output path '", out, "' appears twice"));
    }
  }
  FARM_RETURN_IF_ERROR(ValidateSourceStamps(action));
  FARM_RETURN_IF_ERROR(ValidateImageAction(action));
  if (action.timeout_seconds() > kMaxTimeoutSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("timeout_seconds ", action.timeout_seconds(),
                                                   " is over the limit of ", kMaxTimeoutSeconds));
  }
  return ValidateRequirements(action.requirements());
}

}  // namespace farm::coordinator
