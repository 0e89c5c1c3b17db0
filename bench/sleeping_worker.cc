#include "bench/sleeping_worker.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/simulated_worker.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::bench {
namespace {

// Idle long polls: short enough that a finished action is reported within it, long enough
// that 128 idle workers do not keep a 2-core coordinator busy.
constexpr absl::Duration kIdlePoll = absl::Seconds(1);

struct Running {
  farm::v1::Lease lease;
  absl::Time leased, ends;
  double peak_ram_mib = 0;
};

// "seconds=S" and "peak_ram_mib=M" out of a script SimulatedScript wrote.
void ParseScript(const std::string& script, double& seconds, double& ram) {
  for (absl::string_view word : absl::StrSplit(script, absl::ByAnyChar(" \n"))) {
    std::pair<std::string, std::string> kv = absl::StrSplit(word, absl::MaxSplits('=', 1));
    if (kv.first == "seconds") (void)absl::SimpleAtod(kv.second, &seconds);
    if (kv.first == "peak_ram_mib") (void)absl::SimpleAtod(kv.second, &ram);
  }
}

void Fail(FleetLedger& ledger, const std::string& what) {
  absl::MutexLock lock(&ledger.mu);
  if (ledger.errors++ == 0) ledger.first_error = what;
}

// One worker call, sent again while the coordinator answers "busy" (as farm-worker's own
// retry loop does): back-pressure, counted, not an error.
grpc::Status CallWhileBusy(FleetLedger& ledger, const std::function<grpc::Status()>& call) {
  grpc::Status last;
  const RetryOptions busy{.deadline = absl::Now() + absl::Minutes(1),
                          .initial_backoff = absl::Milliseconds(50),
                          .max_backoff = absl::Seconds(1),
                          .retry_only = IsCoordinatorBusy,
                          .on_retry = [&](const RetryEvent&) {
                            absl::MutexLock lock(&ledger.mu);
                            ++ledger.busy_answers;
                          }};
  (void)Retry(busy, [&] {
    last = call();
    return FromGrpcStatus(last);
  });
  return last;
}

class SleepingWorker {
 public:
  SleepingWorker(const SleepingWorkerConfig& config, SimulatedSession session, FleetLedger& ledger)
      : config_(config),
        session_(std::move(session)),
        ledger_(ledger),
        cas_(CasClient::Connect(config.address, config.token)) {}

  void Run(const std::atomic<bool>& stop) {
    absl::Time next_heartbeat = absl::Now() + session_.heartbeat_interval;
    while (!stop.load()) {
      if (config_.vanish != nullptr && config_.vanish->load()) return;
      CompleteFinished();
      if (absl::Now() >= next_heartbeat) {
        Heartbeat();
        next_heartbeat = absl::Now() + session_.heartbeat_interval;
      }
      const absl::Time now = absl::Now();
      absl::Time wake = std::min(next_heartbeat, now + kIdlePoll);
      for (const Running& r : running_) wake = std::min(wake, r.ends);
      const absl::Duration wait = std::max(absl::ZeroDuration(), wake - now);
      if (running_.size() < config_.slots) {
        Lease(static_cast<uint32_t>(config_.slots - running_.size()), wait);
      } else {
        absl::SleepFor(wait);
      }
    }
    Leave();
  }

 private:
  template <typename Request>
  void Name(Request& req) const {
    req.set_name(session_.name);
    req.set_session_id(session_.session_id);
  }

  void Prepare(grpc::ClientContext& ctx, absl::Duration timeout) const {
    AttachToken(ctx, config_.token);
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }

  void Lease(uint32_t free, absl::Duration wait) {
    grpc::ClientContext ctx;
    // The coordinator keeps 200 ms of the client's deadline for itself (worker_service.cc).
    Prepare(ctx, wait + absl::Seconds(5));
    farm::v1::LeaseActionsRequest req;
    Name(req);
    req.set_free_slots(free);
    req.set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(wait)));
    farm::v1::LeaseActionsResponse resp;
    const grpc::Status st = session_.stub->LeaseActions(&ctx, req, &resp);
    if (IsCoordinatorBusy(FromGrpcStatus(st))) {  // the next turn of Run asks again
      absl::MutexLock lock(&ledger_.mu);
      ++ledger_.busy_answers;
      return;
    }
    if (!st.ok()) {
      Fail(ledger_, absl::StrCat(session_.name, " LeaseActions: ", st.error_message()));
      absl::SleepFor(absl::Milliseconds(100));
      return;
    }
    for (const auto& lease : resp.leases()) {
      const absl::Time leased = absl::Now();
      // The real worker fetches inputs into its blob cache before it runs anything.
      for (const auto& in : lease.action().inputs()) {
        if (auto bytes = cas_->DownloadBytes(in.digest(), 1 << 20); !bytes.ok()) {
          Fail(ledger_, absl::StrCat(session_.name, " input: ", bytes.status().ToString()));
        }
      }
      double seconds = 0, ram = 0;
      const auto& argv = lease.action().argv();
      ParseScript(argv.empty() ? "" : argv[argv.size() - 1], seconds, ram);
      running_.push_back({lease, leased, leased + config_.scale.Real(seconds), ram});
    }
    if (!resp.leases().empty()) NoteRamInUse();
  }

  void NoteRamInUse() {
    double in_use = 0;
    for (const Running& r : running_) in_use += r.peak_ram_mib;
    absl::MutexLock lock(&ledger_.mu);
    double& peak = ledger_.peak_ram_in_use_mib[config_.index];
    peak = std::max(peak, in_use);
  }

  void CompleteFinished() {
    const absl::Time now = absl::Now();
    auto done_end = std::partition(running_.begin(), running_.end(),
                                   [&](const Running& r) { return r.ends > now; });
    if (done_end == running_.end()) return;
    farm::v1::CompleteActionsRequest req;
    Name(req);
    std::vector<ExecutedAction> executed;
    for (auto it = done_end; it != running_.end(); ++it) {
      auto* c = req.add_completions();
      c->set_lease_id(it->lease.lease_id());
      c->set_action_id(it->lease.action_id());
      auto* result = c->mutable_result();
      result->set_exit_code(0);
      result->set_wall_seconds(absl::ToDoubleSeconds(it->ends - it->leased));
      result->set_peak_rss_bytes(static_cast<uint64_t>(it->peak_ram_mib * (1 << 20)));
      for (const auto& path : it->lease.action().output_paths()) {
        // A few bytes per output, unique to the action: one real CAS upload each.
        auto digest = cas_->UploadBytes(absl::StrCat(it->lease.action_id(), " ", path));
        if (!digest.ok()) {
          Fail(ledger_, absl::StrCat(session_.name, " output: ", digest.status().ToString()));
          continue;
        }
        auto* out = result->add_outputs();
        out->set_path(path);
        *out->mutable_digest() = *digest;
      }
      executed.push_back({it->lease.action_id(), it->lease.action().shard(), config_.index,
                          it->leased, absl::Now(), it->peak_ram_mib});
    }
    running_.erase(done_end, running_.end());
    farm::v1::CompleteActionsResponse resp;
    const grpc::Status st = CallWhileBusy(ledger_, [&] {
      grpc::ClientContext ctx;
      Prepare(ctx, absl::Seconds(30));
      resp.Clear();
      return session_.stub->CompleteActions(&ctx, req, &resp);
    });
    const absl::Time reported = absl::Now();
    if (!st.ok() || resp.rejected_lease_ids_size() > 0) {
      Fail(ledger_, absl::StrCat(session_.name, " CompleteActions: ", st.error_message(), " (",
                                 resp.rejected_lease_ids_size(), " rejected)"));
    }
    absl::MutexLock lock(&ledger_.mu);
    for (auto& e : executed) {
      e.finished = reported;
      ledger_.actions.push_back(std::move(e));
    }
  }

  void Heartbeat() {
    farm::v1::HeartbeatRequest req;
    Name(req);
    req.set_slots_in_use(static_cast<uint32_t>(running_.size()));
    for (const Running& r : running_) req.add_lease_ids(r.lease.lease_id());
    farm::v1::HeartbeatResponse resp;
    const grpc::Status st = CallWhileBusy(ledger_, [&] {
      grpc::ClientContext call;
      Prepare(call, absl::Seconds(10));
      resp.Clear();
      return session_.stub->Heartbeat(&call, req, &resp);
    });
    if (!st.ok()) Fail(ledger_, absl::StrCat(session_.name, " Heartbeat: ", st.error_message()));
    for (const auto& revoked : resp.revoked_lease_ids()) {
      Fail(ledger_, absl::StrCat(session_.name, ": lease ", revoked, " revoked"));
      running_.erase(
          std::remove_if(running_.begin(), running_.end(),
                         [&](const Running& r) { return r.lease.lease_id() == revoked; }),
          running_.end());
    }
  }

  void Leave() {
    grpc::ClientContext ctx;
    Prepare(ctx, absl::Seconds(5));
    farm::v1::LeaveRequest req;
    Name(req);
    farm::v1::LeaveResponse resp;
    (void)session_.stub->Leave(&ctx, req, &resp);
  }

  const SleepingWorkerConfig& config_;
  SimulatedSession session_;
  FleetLedger& ledger_;
  std::unique_ptr<CasClient> cas_;
  std::vector<Running> running_;
};

}  // namespace

absl::StatusOr<HostShape> KnownHostShape(const std::string& type) {
  static const auto* kShapes = new std::map<std::string, HostShape>{
      {"m8g.4xlarge", {"m8g.4xlarge", "aarch64", 16, 64}},
      {"m8g.8xlarge", {"m8g.8xlarge", "aarch64", 32, 128}},
      {"grace", {"grace", "aarch64", 72, 480}},
  };
  auto it = kShapes->find(type);
  if (it == kShapes->end()) {
    return absl::NotFoundError(
        absl::StrCat("unknown host type '", type, "'. Fix: use m8g.4xlarge, m8g.8xlarge or grace"));
  }
  return it->second;
}

std::string SimulatedScript(const std::string& what, double seconds, double peak_ram_mib) {
  return absl::StrFormat("# farm-sim %s seconds=%.3f peak_ram_mib=%.0f", what, seconds,
                         peak_ram_mib);
}

void RunSleepingWorker(const SleepingWorkerConfig& config, const std::atomic<bool>& stop,
                       FleetLedger& ledger) {
  farm::v1::WorkerCapabilities caps;
  caps.set_os("linux");
  caps.set_cpu_arch(config.shape.cpu_arch);
  caps.set_glibc("2.35");
  caps.set_cores(config.shape.cores);
  caps.set_ram_bytes(static_cast<uint64_t>(config.shape.ram_gib * (uint64_t{1} << 30)));
  caps.set_slots(config.slots);
  caps.set_hostname(absl::StrCat("sim-host-", config.index));
  caps.set_sandboxed(true);
  (*caps.mutable_labels())["instance"] = config.shape.type;
  *caps.add_cuda() = config.toolkit;
  auto session =
      RegisterSimulatedWorker(config.address, config.token,
                              absl::StrCat("sim-", config.shape.type, "-", config.index), caps);
  if (!session.ok()) {
    ComponentLogger("fleet_sim")->error("{}", session.status().ToString());
    Fail(ledger, session.status().ToString());
    return;
  }
  {
    absl::MutexLock lock(&ledger.mu);
    ++ledger.registered;
  }
  SleepingWorker(config, *std::move(session), ledger).Run(stop);
}

}  // namespace farm::bench
