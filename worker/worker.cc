#include "worker/worker.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "libfarm/auth/token.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/exit_code.h"

namespace farm::worker {
namespace {

std::string DefaultWorkDir(const std::string& name) {
  const std::string cache =
      GetEnvOr("XDG_CACHE_HOME", absl::StrCat(GetEnvOr("HOME", "/tmp"), "/.cache"));
  return absl::StrCat(cache, "/wheelfarm/worker-", name);
}

// What actions never see, even where it lies under a directory they do: this worker's token
// file (and where a symlink to it leads), its work dir (blob cache, other actions' scratch
// dirs) and the packaged config directory (deploy/config, installed in /etc/wheelfarm).
std::vector<std::string> HiddenFromActions(const std::string& token_file,
                                           const std::string& work_dir) {
  std::vector<std::string> hidden = {"/etc/wheelfarm"};
  for (const std::string& path : {token_file, work_dir}) {
    std::error_code ec;
    hidden.push_back(std::filesystem::absolute(path, ec).string());
    const auto real = std::filesystem::canonical(path, ec);
    if (!ec) hidden.push_back(real.string());
  }
  return hidden;
}

// The operator must fix it: whatever the cause's code, the process exits 2.
absl::Status ForOperator(const absl::Status& s) {
  return ExitCodeForStatus(s) == kExitConfig ? s : absl::FailedPreconditionError(s.message());
}

}  // namespace

absl::StatusOr<std::unique_ptr<Worker>> Worker::Start(WorkerOptions options) {
  auto log = ComponentLogger("worker");
  if (options.token_file.empty()) {
    return absl::FailedPreconditionError(
        "no farm token: pass --token-file (or set FARM_TOKEN_FILE) to the coordinator's "
        "token file");
  }
  auto token = ReadTokenFile(options.token_file);
  if (!token.ok()) return ForOperator(token.status());
  auto channel_options = LoadChannelOptions(options.tls);
  if (!channel_options.ok()) return ForOperator(channel_options.status());

  std::unique_ptr<Worker> w(new Worker());
  CapabilityOptions& caps_options = options.capabilities;
  caps_options.work_dir =
      options.work_dir.empty() ? DefaultWorkDir(options.name) : options.work_dir;
  std::error_code ec;
  std::filesystem::create_directories(caps_options.work_dir, ec);
  if (ec || ::access(caps_options.work_dir.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use work dir ", caps_options.work_dir, ": ",
                     ec ? ec.message() : std::strerror(errno),
                     ". Fix: pass --work-dir with a writable directory"));
  }
  auto claim = ClaimWorkDir(caps_options.work_dir);
  if (!claim.ok()) return claim.status();
  w->claim_.emplace(*std::move(claim));
  // Checked before anything else is set up: a host that cannot sandbox gets no work.
  if (!options.sandbox) {
    log->warn("--no-sandbox: actions run with this worker's own rights and can read its token");
  } else {
    w->sandbox_.emplace(
        SandboxOptions{.hidden = HiddenFromActions(options.token_file, caps_options.work_dir)});
    if (absl::Status s = w->sandbox_->Probe(); !s.ok()) return ForOperator(s);
  }
  auto caps = DetectCapabilities(caps_options);
  if (!caps.ok()) return caps.status();
  if (absl::Status s = CheckWorkerLabels(*caps); !s.ok()) return ForOperator(s);
  caps->set_sandboxed(w->sandbox_.has_value());
  // Registered with text the coordinator can parse; `caps` keeps the paths this worker uses.
  auto sendable = SendableCapabilities(*caps);
  if (!sendable.ok()) return ForOperator(sendable.status());
  w->capabilities_ = *std::move(sendable);
  std::vector<std::string> toolkits;
  for (const auto& t : caps->cuda()) {
    toolkits.push_back(absl::StrCat("CUDA ", t.version(), " (", t.release(), ", ", t.sms_size(),
                                    " SMs) at ", t.path()));
  }
  log->info("farm-worker {} '{}': {} {}, glibc {}, {} cores, {} GiB RAM, {} slots, {}, {}",
            FARM_VERSION, options.name, caps->os(), caps->cpu_arch(), caps->glibc(), caps->cores(),
            caps->ram_bytes() >> 30, caps->slots(),
            toolkits.empty() ? "no CUDA toolkit" : absl::StrJoin(toolkits, "; "),
            w->sandbox_.has_value() ? absl::StrCat("actions sandboxed by ", w->sandbox_->bwrap())
                                    : "actions NOT sandboxed");

  // Results of finished actions wait out a coordinator restart as long as their report does.
  w->cas_ = CasClient::Connect(options.coordinator, *token,
                               {.patience = DaemonOptions{}.report_patience}, *channel_options);
  w->cache_ = std::make_unique<BlobCache>(caps_options.work_dir + "/cache", options.cache_bytes,
                                          w->cas_.get());
  std::map<std::string, std::string> cuda_roots;
  for (const auto& t : caps->cuda()) {
    cuda_roots.emplace(t.version(), t.path());
    // Device compiles name the exact release ("13.0.88"; nvcc says "V13.0.88").
    cuda_roots.emplace(std::string(absl::StripPrefix(t.release(), "V")), t.path());
  }
  if (w->sandbox_.has_value()) {
    w->toolchains_ = std::make_unique<HostToolchains>(
        caps_options.work_dir + "/toolchains", w->cache_.get(), &*w->sandbox_,
        HostToolchainsOptions{.max_tree_bytes = options.disk.max_action_bytes});
  }
  w->runner_ = std::make_unique<ActionRunner>(
      caps_options.work_dir + "/scratch", w->cache_.get(), w->cas_.get(), std::move(cuda_roots),
      w->sandbox_.has_value() ? &*w->sandbox_ : nullptr, w->toolchains_.get(), options.disk);
  if (absl::Status s = w->runner_->ClearScratchRoot(); !s.ok()) return ForOperator(s);

  WheelBuildOptions& builds = options.wheel_builds;
  builds.coordinator = options.coordinator;
  builds.token_file = std::filesystem::absolute(options.token_file).string();
  builds.tls = options.tls;
  builds.cores = caps->cores();
  builds.ram_bytes = caps->ram_bytes();
  for (const auto& t : caps->cuda()) builds.cuda_roots.emplace(t.version(), t.path());
  for (const auto& p : caps->python()) builds.pythons.emplace(p.version(), p);
  auto channel = DialCoordinator(options.coordinator, *channel_options);
  w->build_stub_ = farm::v1::BuildService::NewStub(channel);
  w->wheel_builds_ = std::make_unique<WheelBuildRunner>(builds, w->runner_.get(), w->cas_.get(),
                                                        w->build_stub_.get());
  w->smoke_tests_ = std::make_unique<SmokeTestRunner>(
      caps_options.work_dir + "/smoke", builds.pythons,
      std::vector<farm::v1::GpuDevice>(caps->gpus().begin(), caps->gpus().end()), w->runner_.get());
  w->dispatcher_ = std::make_unique<LeaseDispatcher>(w->runner_.get(), w->wheel_builds_.get(),
                                                     w->smoke_tests_.get());
  w->daemon_ = std::make_unique<WorkerDaemon>(farm::v1::WorkerService::NewStub(channel),
                                              DaemonOptions{.name = options.name,
                                                            .token = *token,
                                                            .coordinator = options.coordinator,
                                                            .instance_id = w->claim_->instance_id},
                                              w->capabilities_, w->dispatcher_.get());
  return w;
}

absl::Status Worker::Run(absl::Notification& stop) { return daemon_->Run(stop); }

}  // namespace farm::worker
