// A worker host assembled: its options checked against the host (token, TLS files, work dir,
// sandbox, capabilities), then the CAS client, blob cache, action and wheel-build runners and
// the daemon that leases from the coordinator. farm-worker's main only parses flags.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/tls/client_tls.h"
#include "worker/action_runner.h"
#include "worker/blob_cache.h"
#include "worker/capabilities.h"
#include "worker/sandbox.h"
#include "worker/smoke_test_runner.h"
#include "worker/wheel_build_runner.h"
#include "worker/work_dir_claim.h"
#include "worker/worker_daemon.h"

namespace farm::worker {

struct WorkerOptions {
  std::string coordinator = "127.0.0.1:7420";  // host:port, already checked
  std::string token_file;
  ClientTlsFiles tls;
  std::string name;
  std::string work_dir;  // empty: ~/.cache/wheelfarm/worker-NAME
  uint64_t cache_bytes = uint64_t{10} << 30;
  ActionDiskLimits disk;  // per leased action
  bool sandbox = true;
  CapabilityOptions capabilities;  // its work_dir is set by Start
  WheelBuildOptions wheel_builds;  // coordinator, token and host facts are set by Start
};

class Worker {
 public:
  // Checks everything the worker needs from its host and wires it up; errors name the fix
  // (ExitCodeForStatus gives the process's exit code). Nothing is contacted yet.
  static absl::StatusOr<std::unique_ptr<Worker>> Start(WorkerOptions options);

  // Registers, leases and runs actions until `stop` is notified, then drains.
  absl::Status Run(absl::Notification& stop);

  // As registered: text that is not UTF-8 escaped (SendableCapabilities).
  const farm::v1::WorkerCapabilities& capabilities() const { return capabilities_; }

 private:
  Worker() = default;

  std::optional<WorkDirClaim> claim_;
  std::optional<Sandbox> sandbox_;
  farm::v1::WorkerCapabilities capabilities_;
  std::unique_ptr<CasClient> cas_;
  std::unique_ptr<BlobCache> cache_;
  std::unique_ptr<HostToolchains> toolchains_;  // with a sandbox only
  std::unique_ptr<ActionRunner> runner_;
  std::unique_ptr<farm::v1::BuildService::Stub> build_stub_;
  std::unique_ptr<WheelBuildRunner> wheel_builds_;
  std::unique_ptr<SmokeTestRunner> smoke_tests_;
  std::unique_ptr<LeaseDispatcher> dispatcher_;
  std::unique_ptr<WorkerDaemon> daemon_;
};

}  // namespace farm::worker
