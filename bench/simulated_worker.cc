#include "bench/simulated_worker.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::bench {

absl::StatusOr<SimulatedSession> RegisterSimulatedWorker(
    const std::string& address, const std::string& token, const std::string& name,
    const farm::v1::WorkerCapabilities& capabilities) {
  SimulatedSession s;
  s.stub = farm::v1::WorkerService::NewStub(farm::DialCoordinator(address));
  s.name = name;
  farm::v1::RegisterRequest reg;
  reg.set_name(name);
  *reg.mutable_capabilities() = capabilities;
  farm::v1::RegisterResponse session;
  grpc::ClientContext ctx;
  farm::AttachToken(ctx, token);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status st = s.stub->Register(&ctx, reg, &session);
  if (!st.ok()) {
    return absl::UnavailableError(
        absl::StrCat("simulated worker '", name, "' could not register at ", address, ": ",
                     st.error_message(), ". Fix: check the coordinator's log and its token file"));
  }
  s.session_id = session.session_id();
  s.heartbeat_interval = absl::Milliseconds(session.heartbeat_interval_ms());
  return s;
}

void SimulatedWorker(const std::string& address, const std::string& token, int index,
                     uint32_t slots, const std::atomic<bool>& stop, LeaseTimes& times,
                     std::atomic<int64_t>& completed) {
  farm::v1::WorkerCapabilities caps;
  caps.set_os("linux");
  caps.set_cpu_arch("x86_64");
  caps.set_slots(slots);
  auto session = RegisterSimulatedWorker(address, token, absl::StrCat("sim-", index), caps);
  if (!session.ok()) return;
  auto& stub = session->stub;
  const std::string& name = session->name;
  while (!stop.load()) {
    grpc::ClientContext ctx;
    farm::AttachToken(ctx, token);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    farm::v1::LeaseActionsRequest req;
    req.set_name(name);
    req.set_session_id(session->session_id);
    req.set_free_slots(slots);
    req.set_wait_ms(500);
    farm::v1::LeaseActionsResponse leases;
    if (!stub->LeaseActions(&ctx, req, &leases).ok() || leases.leases().empty()) continue;
    const absl::Time now = absl::Now();
    {
      absl::MutexLock lock(&times.mu);
      for (const auto& l : leases.leases()) times.leased[l.action_id()] = now;
    }
    grpc::ClientContext done_ctx;
    farm::AttachToken(done_ctx, token);
    farm::v1::CompleteActionsRequest done;
    done.set_name(name);
    done.set_session_id(session->session_id);
    for (const auto& l : leases.leases()) {
      auto* c = done.add_completions();
      c->set_lease_id(l.lease_id());
      c->set_action_id(l.action_id());
    }
    farm::v1::CompleteActionsResponse resp;
    if (stub->CompleteActions(&done_ctx, done, &resp).ok()) {
      completed += leases.leases_size() - resp.rejected_lease_ids_size();
    }
  }
}

}  // namespace farm::bench
