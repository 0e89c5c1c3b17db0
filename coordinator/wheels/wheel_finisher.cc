#include "coordinator/wheels/wheel_finisher.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/index/index_publisher.h"
#include "coordinator/wheels/built_wheel_identity.h"
#include "libfarm/coverage/wheel_verifier.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "libfarm/publish/command_hook_publisher.h"
#include "libfarm/publish/legacy_upload_client.h"
#include "libfarm/retag/wheel_retag.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/versions/dotted_version.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

farm::v1::Verification VerificationOf(const VerifyReport& report, const ArchList& archs) {
  farm::v1::Verification out;
  out.set_ok(report.Passed());
  const auto totals = report.inspection.ArchTotals();
  for (const ArchRequest& r : archs.requests) {
    const std::string sm = r.target.SmName();
    auto* row = out.add_rows();
    row->set_arch(sm);
    auto it = totals.find(sm);
    row->set_size_bytes(it == totals.end() ? 0 : it->second);
    bool missing = it == totals.end();
    for (const VerifyFinding& f : report.failures) {
      if (f.check == "arch" && absl::StrContains(f.message, sm)) {
        missing = true;
        row->set_note(f.message);
      }
    }
    if (r.ptx) {
      const std::string ptx = r.target.ComputeName();
      if (auto p = totals.find(ptx); p != totals.end()) {
        row->set_size_bytes(row->size_bytes() + p->second);
      }
    }
    row->set_present(!missing);
  }
  std::vector<std::string> problems;
  for (const VerifyFinding& f : report.failures) {
    problems.push_back(
        absl::StrCat(f.check, f.path.empty() ? "" : absl::StrCat(" ", f.path), ": ", f.message));
  }
  out.set_message(problems.empty()
                      ? absl::StrCat("every requested arch is present: ", archs.ToString())
                      : absl::StrJoin(problems, "; "));
  return out;
}

// The verified wheel a build's smoke tests install, as the CAS holds it.
farm::v1::Digest WheelDigest(const farm::v1::Build& build) {
  farm::v1::Digest wheel;
  wheel.set_hash(build.wheel().sha256());
  wheel.set_size_bytes(static_cast<int64_t>(build.wheel().size_bytes()));
  return wheel;
}

}  // namespace

WheelFinisher::WheelFinisher(BuildRegistry* builds, PackageIndex* index, std::string work_dir,
                             BlobStore* blobs, SmokeStage* smoke)
    : builds_(builds),
      index_(index),
      work_dir_(std::move(work_dir)),
      blobs_(blobs),
      smoke_(smoke) {}

absl::Status WheelFinisher::Fail(const std::string& id, const std::string& reason) {
  builds_->AppendLog(id, absl::StrCat("wheelfarm: ", reason, "\n")).IgnoreError();
  FARM_RETURN_IF_ERROR(builds_->SetState(id, farm::v1::BUILD_STATE_FAILED, reason));
  return absl::FailedPreconditionError(reason);
}

absl::StatusOr<std::unique_ptr<Publisher>> WheelFinisher::PublisherFor(
    const farm::v1::RecipePublishTarget& target) const {
  if (target.kind() == "builtin") {
    return std::unique_ptr<Publisher>(std::make_unique<BuiltinIndexPublisher>(index_));
  }
  if (target.kind() == "repository") {
    LegacyUploadOptions options{.url = target.url(), .username = target.username()};
    if (!target.password_env().empty()) {
      const char* password = std::getenv(target.password_env().c_str());
      if (password == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the coordinator's environment has no ", target.password_env(), " (the password for ",
            target.url(), "). Fix: set it where the coordinator runs"));
      }
      options.password = password;
    }
    auto client = LegacyUploadClient::Create(options);
    if (!client.ok()) return client.status();
    return std::unique_ptr<Publisher>(std::move(*client));
  }
  if (target.kind() == "command") {
    std::vector<std::string> argv(target.command().argv().begin(), target.command().argv().end());
    // Recipes are refused at load with a shell-string hook; a plan stored before that rule
    // can still hold one, and it must not reach a shell either.
    if (argv.empty()) {
      return absl::FailedPreconditionError(
          "the recipe's publish hook is a shell string, which is no longer run. Fix: write "
          "publish.command as an argv array (recipes/README.md) and submit the build again");
    }
    auto hook = CommandHookPublisher::Create(std::move(argv));
    if (!hook.ok()) return hook.status();
    return std::unique_ptr<Publisher>(std::move(*hook));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown publish kind '", target.kind(), "'"));
}

absl::Status WheelFinisher::Finish(const std::string& id, const farm::v1::BuildPlan& plan,
                                   const std::string& blob_path, const std::string& filename) {
  auto log = ComponentLogger("coordinator");
  auto current = builds_->Get(id);
  if (!current.ok()) return current.status();
  if (current->state() != farm::v1::BUILD_STATE_PUBLISHING) {
    FARM_RETURN_IF_ERROR(builds_->SetState(id, farm::v1::BUILD_STATE_VERIFYING,
                                           "checking the wheel's archs, tags and glibc"));
  }
  auto archs = ParseArchList(plan.archs());
  auto cuda = ParseToolkitVersion(plan.cuda_version());
  auto ceiling = ParseDottedVersion(plan.glibc_max());
  if (!archs.ok() || !cuda.ok() || !ceiling.ok()) {
    return Fail(id, "the build's plan is unreadable (archs, CUDA or glibc)");
  }
  const fs::path dir = fs::path(work_dir_) / id;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Fail(id, absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  struct RemoveDir {
    fs::path dir;
    ~RemoveDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};

  // The host names the file, and the build's code chose it: it must be a plain wheel name
  // (it is copied here by it, and published under it) of the build's package and version.
  if (filename.empty() || filename.find('/') != std::string::npos || filename[0] == '.' ||
      !absl::EndsWith(filename, ".whl")) {
    return Fail(id, absl::StrCat("the build host returned \"", absl::CHexEscape(filename),
                                 "\", not a wheel name"));
  }
  if (auto name = CheckBuiltWheelName(filename, plan.package(), plan.version()); !name.ok()) {
    return Fail(id, std::string(name.status().message()));
  }
  fs::create_directories(dir / "built", ec);
  const fs::path wheel_path = dir / "built" / filename;
  fs::copy_file(blob_path, wheel_path, ec);
  if (ec) return Fail(id, absl::StrCat("cannot copy the wheel: ", ec.message()));
  auto retagged =
      RetagWheel(wheel_path.string(), RetagOptions{.cuda = *cuda,
                                                   .cpu_arch = plan.cpu_arch(),
                                                   .glibc_ceiling = DottedVersion{*ceiling},
                                                   .output_dir = dir.string(),
                                                   .archs = *archs});
  if (!retagged.ok()) {
    return Fail(id, absl::StrCat("the wheel cannot be tagged for publishing: ",
                                 retagged.status().message()));
  }
  // Retagging takes the version from the wheel's .dist-info folder: what it wrote must still
  // be the build's, inside and out.
  if (absl::Status s =
          CheckBuiltWheel(retagged->path, retagged->filename, plan.package(), plan.version());
      !s.ok()) {
    return Fail(id, std::string(s.message()));
  }
  auto report = VerifyWheel(retagged->path, VerifyPolicy{*archs, DottedVersion{*ceiling}});
  if (!report.ok()) {
    return Fail(id, absl::StrCat("cannot verify the wheel: ", report.status().message()));
  }
  auto digest = DigestOfFile(retagged->path);
  if (!digest.ok()) return Fail(id, std::string(digest.status().message()));
  farm::v1::WheelInfo wheel;
  wheel.set_filename(retagged->filename);
  wheel.set_size_bytes(static_cast<uint64_t>(digest->size_bytes()));
  wheel.set_sha256(digest->hash());
  for (const auto& [arch, bytes] : report->inspection.ArchTotals()) {
    (*wheel.mutable_device_code_bytes())[arch] = bytes;
  }
  farm::v1::Verification verification = VerificationOf(*report, *archs);
  // The planned SASS was checked above; say how each requested arch runs on it.
  *verification.mutable_arch_routes() = plan.arch_routes();
  FARM_RETURN_IF_ERROR(builds_->SetWheel(id, wheel));
  FARM_RETURN_IF_ERROR(builds_->SetVerification(id, verification));
  builds_
      ->AppendLog(
          id, absl::StrCat("wheelfarm: ", retagged->filename, ": ", verification.message(), "\n"))
      .IgnoreError();
  if (!verification.ok()) {
    return Fail(id, absl::StrCat("verification failed, not published: ", verification.message()));
  }

  if (plan.has_smoke() && smoke_ != nullptr && blobs_ != nullptr &&
      current->state() != farm::v1::BUILD_STATE_PUBLISHING) {
    // The verified wheel waits in the CAS while GPU workers install and test it.
    auto stored = blobs_->PutFile(retagged->path);
    if (!stored.ok()) {
      return Fail(id, absl::StrCat("cannot keep the wheel for its smoke tests: ",
                                   stored.status().message()));
    }
    if (!KeepWheelForSmoke(id, *stored)) return absl::OkStatus();  // cancelled meanwhile
    if (absl::Status s = smoke_->Start(id, plan, *stored, retagged->filename); !s.ok()) {
      blobs_->Unpin(SmokePinOwner(id));
      return Fail(id, absl::StrCat("cannot start the smoke tests: ", s.message()));
    }
    FARM_RETURN_IF_ERROR(builds_->SetState(
        id, farm::v1::BUILD_STATE_VERIFYING,
        absl::StrCat("smoke testing ", retagged->filename, " on the GPU workers")));
    return FollowSmoke(id, plan);
  }
  return Publish(id, plan, retagged->path, retagged->filename, current->state(), "");
}

absl::Status WheelFinisher::FollowSmoke(const std::string& id, const farm::v1::BuildPlan& plan) {
  if (smoke_ == nullptr || blobs_ == nullptr) {
    return Fail(id, "this coordinator cannot run smoke tests");
  }
  {
    auto before = builds_->Get(id);
    if (!before.ok()) return before.status();
    // Pins live in memory: after a coordinator restart this takes the wheel's pin again,
    // before a test whose action was lost is queued again with it. Cancelled: CancelSmoke
    // let the wheel go, and it stays gone.
    if (IsTerminalBuildState(before->state()) || !KeepWheelForSmoke(id, WheelDigest(*before))) {
      return absl::OkStatus();
    }
  }
  auto done = smoke_->Advance(id);
  if (!done.ok()) return done.status();
  auto build = builds_->Get(id);
  if (!build.ok()) return build.status();
  // Cancelled meanwhile: CancelSmoke let the wheel go (it was pinned before).
  if (IsTerminalBuildState(build->state())) return absl::OkStatus();
  // The build's reason says while an SM waits for a GPU worker (require_gpu), and for which.
  if (!*done) {
    const std::string waiting = SmokeStage::WaitingSms(build->smoke());
    const std::string up_to = absl::FormatDuration(GpuWait(plan.smoke()));
    const std::string reason = absl::StrCat(
        "smoke testing ", build->wheel().filename(), " on the GPU workers",
        waiting.empty()
            ? ""
            : absl::StrCat("; ", waiting, " waiting for a GPU worker that runs it (up to ", up_to,
                           ")"));
    if (reason != build->reason()) {
      builds_->SetState(id, farm::v1::BUILD_STATE_VERIFYING, reason).IgnoreError();
    }
  }
  if (!*done) return absl::OkStatus();
  const farm::v1::Digest wheel = WheelDigest(*build);
  struct Unpin {
    BlobStore* blobs;
    std::string owner;
    ~Unpin() { blobs->Unpin(owner); }
  } unpin{blobs_, SmokePinOwner(id)};
  const std::string summary = SmokeSummary(build->smoke());
  builds_->AppendLog(id, absl::StrCat("wheelfarm: smoke tests: ", summary, "\n")).IgnoreError();
  std::vector<std::string> marked;
  if (absl::Status verdict =
          SmokeVerdict(plan.smoke(), {build->smoke().begin(), build->smoke().end()}, &marked);
      !verdict.ok()) {
    return Fail(id, absl::StrCat("not published: ", verdict.message()));
  }
  auto path = blobs_->PathOf(wheel);
  if (!path.ok()) {
    return Fail(id, absl::StrCat("the smoke-tested wheel left the CAS: ", path.status().message()));
  }
  // Publishers take the file's name as the wheel's: a copy under it.
  const fs::path dir = fs::path(work_dir_) / id;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  const fs::path copy = dir / build->wheel().filename();
  fs::copy_file(*path, copy, ec);
  if (ec) return Fail(id, absl::StrCat("cannot copy the wheel: ", ec.message()));
  absl::Status published =
      Publish(id, plan, copy.string(), build->wheel().filename(), build->state(),
              marked.empty() ? "" : absl::StrCat("; marked: ", absl::StrJoin(marked, "; ")));
  fs::remove_all(dir, ec);
  return published;
}

void WheelFinisher::ResumeSmoke(const farm::v1::Build& build) {
  if (smoke_ == nullptr || blobs_ == nullptr || build.smoke_size() == 0 ||
      build.state() != farm::v1::BUILD_STATE_VERIFYING) {
    return;
  }
  KeepWheelForSmoke(build.id(), WheelDigest(build));
}

bool WheelFinisher::KeepWheelForSmoke(const std::string& id, const farm::v1::Digest& wheel) {
  // Pinned before the build is read: a cancel after the read lets the pin go (CancelSmoke
  // follows the build's state), one before it is seen here. Checked first and pinned after,
  // a cancel between the two would leave the wheel pinned until the coordinator restarts.
  blobs_->Pin(SmokePinOwner(id), {wheel});
  auto build = builds_->Get(id);
  if (build.ok() && !IsTerminalBuildState(build->state())) return true;
  blobs_->Unpin(SmokePinOwner(id));
  return false;
}

void WheelFinisher::CancelSmoke(const std::string& id) {
  if (smoke_ != nullptr)
    smoke_->EndWaits(id, "the build was cancelled while it waited").IgnoreError();
  if (blobs_ != nullptr) blobs_->Unpin(SmokePinOwner(id));
}

absl::Status WheelFinisher::Publish(const std::string& id, const farm::v1::BuildPlan& plan,
                                    const std::string& path, const std::string& filename,
                                    farm::v1::BuildState state_before, const std::string& note) {
  auto log = ComponentLogger("coordinator");
  if (absl::Status s = builds_->SetState(id, farm::v1::BUILD_STATE_PUBLISHING,
                                         absl::StrCat("publishing ", filename));
      !s.ok() && state_before != farm::v1::BUILD_STATE_PUBLISHING) {
    return s;
  }
  std::vector<std::string> places;
  for (const auto& target : plan.publish()) {
    auto publisher = PublisherFor(target);
    if (!publisher.ok()) {
      return Fail(id, absl::StrCat("publishing: ", publisher.status().message()));
    }
    auto published = (*publisher)->Publish(path);
    if (!published.ok()) {
      return Fail(id, absl::StrCat("publishing to ", (*publisher)->Describe(), ": ",
                                   published.status().message()));
    }
    FARM_RETURN_IF_ERROR(builds_->AddPublished(id, published->location));
    builds_->AppendLog(id, absl::StrCat("wheelfarm: published to ", published->location, "\n"))
        .IgnoreError();
    places.push_back(published->location);
  }
  log->info("build {}: {} verified and published to {}", id, filename,
            places.empty() ? "nowhere (the recipe names no target)" : absl::StrJoin(places, ", "));
  return builds_->SetState(
      id, farm::v1::BUILD_STATE_SUCCEEDED,
      places.empty() ? absl::StrCat(filename, " verified; the recipe publishes nowhere", note)
                     : absl::StrCat(filename, " verified and published", note));
}

}  // namespace farm::coordinator
