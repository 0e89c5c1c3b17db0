#include "worker/worker_daemon.h"

#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/worker_service_mock.grpc.pb.h"

namespace farm::worker {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::Invoke;
using ::testing::Return;
using ::testing::SetArgPointee;

farm::v1::RegisterResponse Session(const std::string& id) {
  farm::v1::RegisterResponse r;
  r.set_session_id(id);
  r.set_heartbeat_interval_ms(10);
  return r;
}

DaemonOptions Options() {
  return {.name = "w1",
          .token = "t",
          .coordinator = "test",
          .rpc_timeout = absl::Seconds(1),
          .max_backoff = absl::Milliseconds(20)};
}

TEST(WorkerDaemonTest, RetriesUntilCoordinatorAnswersThenDrainsAndLeaves) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  std::atomic<int> heartbeats{0};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, Heartbeat(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::HeartbeatRequest& req,
                                 farm::v1::HeartbeatResponse*) {
        EXPECT_EQ(req.session_id(), "s1");
        if (req.draining()) return grpc::Status::OK;
        if (++heartbeats == 3) stop.Notify();
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Leave(_, _, _))
      .WillOnce(Invoke(
          [](grpc::ClientContext*, const farm::v1::LeaveRequest& req, farm::v1::LeaveResponse*) {
            EXPECT_EQ(req.session_id(), "s1");
            return grpc::Status::OK;
          }));
  WorkerDaemon daemon(std::move(stub), Options(), {});
  EXPECT_TRUE(daemon.Run(stop).ok());
  EXPECT_EQ(heartbeats.load(), 3);
}

TEST(WorkerDaemonTest, RegistersAgainWhenSessionIsUnknown) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s2")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, Heartbeat(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::HeartbeatRequest& req,
                                 farm::v1::HeartbeatResponse*) {
        if (req.session_id() == "s1") return grpc::Status(grpc::StatusCode::NOT_FOUND, "gone");
        if (!stop.HasBeenNotified()) stop.Notify();
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Leave(_, _, _)).WillOnce(Return(grpc::Status::OK));
  WorkerDaemon daemon(std::move(stub), Options(), {});
  EXPECT_TRUE(daemon.Run(stop).ok());
}

TEST(WorkerDaemonTest, RejectedTokenStopsWithUnauthenticated) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "bad token")));
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).Times(0);
  WorkerDaemon daemon(std::move(stub), Options(), {});
  absl::Status s = daemon.Run(stop);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated);
}

// What the coordinator answers when its disk is full (FAILED_PRECONDITION from Register) or
// its store fails (INTERNAL, DATA_LOSS): a daemon waits for the operator to fix it.
TEST(WorkerDaemonTest, OutwaitsTheCoordinatorsFaultsAndItsFullDisk) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  std::atomic<int> heartbeats{0};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "disk full")))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::INTERNAL, "RocksDB error")))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, Heartbeat(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::HeartbeatRequest& req,
                                 farm::v1::HeartbeatResponse*) {
        if (req.draining()) return grpc::Status::OK;
        switch (++heartbeats) {
          case 1:
            return grpc::Status(grpc::StatusCode::INTERNAL, "RocksDB error");
          case 2:
            return grpc::Status(grpc::StatusCode::DATA_LOSS, "corrupt");
          case 3:
            return grpc::Status(grpc::StatusCode::UNKNOWN, "stream removed");
          default:
            if (!stop.HasBeenNotified()) stop.Notify();
            return grpc::Status::OK;
        }
      }));
  EXPECT_CALL(*stub, Leave(_, _, _)).WillOnce(Return(grpc::Status::OK));
  WorkerDaemon daemon(std::move(stub), Options(), {});
  EXPECT_TRUE(daemon.Run(stop).ok());
  EXPECT_GE(heartbeats.load(), 4);
}

TEST(WorkerDaemonTest, ANameHeldByAnotherLiveWorkerIsAConfigurationError) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "name taken")));
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).Times(0);
  WorkerDaemon daemon(std::move(stub), Options(), {});
  absl::Status s = daemon.Run(stop);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "name taken");
}

TEST(WorkerDaemonTest, StoppedWhileTheCoordinatorIsAwayEndsCleanly) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  // No attempt follows the stop signal.
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(Invoke(
          [&](grpc::ClientContext*, const farm::v1::RegisterRequest&, farm::v1::RegisterResponse*) {
            stop.Notify();
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "down");
          }));
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).Times(0);
  WorkerDaemon daemon(std::move(stub), Options(), {});
  EXPECT_TRUE(daemon.Run(stop).ok());
}

}  // namespace
}  // namespace farm::worker

namespace farm::worker {
namespace {

// Blocks each action until released, so a test can stop the daemon mid-action.
class GatedExecutor : public ActionExecutor {
 public:
  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override {
    started.Notify();
    release.WaitForNotification();
    farm::v1::Completion c;
    c.set_lease_id(lease.lease_id());
    c.set_action_id(lease.action_id());
    c.mutable_result()->set_exit_code(cancel.load() ? 137 : 0);
    return c;
  }
  absl::Notification started;
  absl::Notification release;
};

TEST(WorkerDaemonTest, DrainFinishesAndReportsTheRunningActionBeforeLeaving) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  GatedExecutor executor;
  std::atomic<bool> leased{false};
  std::atomic<bool> reported{false};
  std::atomic<bool> renewed_while_draining{false};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, LeaseActions(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::LeaseActionsRequest& req,
                                 farm::v1::LeaseActionsResponse* resp) {
        EXPECT_EQ(req.free_slots(), 1u);
        if (!leased.exchange(true)) {
          auto* l = resp->add_leases();
          l->set_lease_id("L1");
          l->set_action_id("A1");
        }
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Heartbeat(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::HeartbeatRequest& req,
                                 farm::v1::HeartbeatResponse*) {
        if (req.draining() && req.lease_ids_size() == 1 && req.lease_ids(0) == "L1") {
          renewed_while_draining = true;
          executor.release.Notify();
        }
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, CompleteActions(_, _, _))
      .WillOnce(Invoke([&](grpc::ClientContext*, const farm::v1::CompleteActionsRequest& req,
                           farm::v1::CompleteActionsResponse*) {
        EXPECT_EQ(req.completions(0).lease_id(), "L1");
        EXPECT_EQ(req.completions(0).result().exit_code(), 0);
        reported = true;
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Leave(_, _, _)).WillOnce(Invoke([&](auto, auto, auto) {
    // Leaving comes only after the running action was reported.
    EXPECT_TRUE(reported.load());
    return grpc::Status::OK;
  }));
  DaemonOptions options = Options();
  options.lease_poll = absl::Milliseconds(20);
  farm::v1::WorkerCapabilities caps;
  caps.set_slots(1);
  WorkerDaemon daemon(std::move(stub), options, caps, &executor);
  std::thread stopper([&] {
    executor.started.WaitForNotification();
    stop.Notify();
  });
  EXPECT_TRUE(daemon.Run(stop).ok());
  stopper.join();
  EXPECT_TRUE(renewed_while_draining.load());
  EXPECT_TRUE(reported.load());
}

// Finishes each action at once.
class InstantExecutor : public ActionExecutor {
 public:
  farm::v1::Completion Execute(const farm::v1::Lease& lease, const std::atomic<bool>&) override {
    farm::v1::Completion c;
    c.set_lease_id(lease.lease_id());
    c.set_action_id(lease.action_id());
    return c;
  }
};

// The result outlasts a replaced session (the heartbeat loop registers again meanwhile) and
// the coordinator's own faults; the lease's report is tried until the coordinator takes it.
TEST(WorkerDaemonTest, AReportOutlastsAReplacedSessionAndTheCoordinatorsFaults) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  InstantExecutor executor;
  std::atomic<bool> leased{false};
  std::atomic<int> reports{0};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, LeaseActions(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::LeaseActionsRequest&,
                                 farm::v1::LeaseActionsResponse* resp) {
        if (!leased.exchange(true)) resp->add_leases()->set_lease_id("L1");
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  EXPECT_CALL(*stub, CompleteActions(_, _, _))
      .Times(3)
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::CompleteActionsRequest&,
                                 farm::v1::CompleteActionsResponse*) {
        switch (++reports) {
          case 1:
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "session replaced");
          case 2:
            return grpc::Status(grpc::StatusCode::INTERNAL, "RocksDB error");
          default:
            stop.Notify();
            return grpc::Status::OK;
        }
      }));
  EXPECT_CALL(*stub, Leave(_, _, _)).WillOnce(Return(grpc::Status::OK));
  DaemonOptions options = Options();
  options.lease_poll = absl::Milliseconds(20);
  farm::v1::WorkerCapabilities caps;
  caps.set_slots(1);
  WorkerDaemon daemon(std::move(stub), options, caps, &executor);
  EXPECT_TRUE(daemon.Run(stop).ok());
  EXPECT_EQ(reports.load(), 3);
}

TEST(WorkerDaemonTest, AReportTheCoordinatorRefusesIsNotRetried) {
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  InstantExecutor executor;
  std::atomic<bool> leased{false};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, LeaseActions(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::LeaseActionsRequest&,
                                 farm::v1::LeaseActionsResponse* resp) {
        if (!leased.exchange(true)) resp->add_leases()->set_lease_id("L1");
        return grpc::Status::OK;
      }));
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).WillRepeatedly(Return(grpc::Status::OK));
  EXPECT_CALL(*stub, CompleteActions(_, _, _)).WillOnce(Invoke([&](auto, auto, auto) {
    stop.Notify();
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "role may not");
  }));
  EXPECT_CALL(*stub, Leave(_, _, _)).WillOnce(Return(grpc::Status::OK));
  DaemonOptions options = Options();
  options.lease_poll = absl::Milliseconds(20);
  farm::v1::WorkerCapabilities caps;
  caps.set_slots(1);
  WorkerDaemon daemon(std::move(stub), options, caps, &executor);
  EXPECT_TRUE(daemon.Run(stop).ok());
}

// Runs each action until it is cancelled, then takes a while to wind down (a compiler that
// does not die at once).
class UntilCancelledExecutor : public ActionExecutor {
 public:
  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override {
    started.Notify();
    while (!cancel.load()) absl::SleepFor(absl::Milliseconds(5));
    absl::SleepFor(absl::Milliseconds(500));
    farm::v1::Completion c;
    c.set_lease_id(lease.lease_id());
    c.set_action_id(lease.action_id());
    c.mutable_result()->set_exit_code(137);
    return c;
  }
  absl::Notification started;
};

size_t ThreadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(WorkerDaemonTest, AFailedDaemonCancelsAndJoinsItsLeaseThreadsBeforeReturning) {
  const size_t threads_before = ThreadsOfThisProcess();
  auto stub = std::make_unique<farm::v1::MockWorkerServiceStub>();
  absl::Notification stop;
  UntilCancelledExecutor executor;
  std::atomic<bool> leased{false};
  EXPECT_CALL(*stub, Register(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(Session("s1")), Return(grpc::Status::OK)));
  EXPECT_CALL(*stub, LeaseActions(_, _, _))
      .WillRepeatedly(Invoke([&](grpc::ClientContext*, const farm::v1::LeaseActionsRequest&,
                                 farm::v1::LeaseActionsResponse* resp) {
        if (!leased.exchange(true)) {
          auto* l = resp->add_leases();
          l->set_lease_id("L1");
          l->set_action_id("A1");
        }
        return grpc::Status::OK;
      }));
  // Once the action runs, the coordinator refuses the token: nothing can be reported.
  EXPECT_CALL(*stub, Heartbeat(_, _, _)).WillRepeatedly(Invoke([&](auto, auto, auto) {
    return executor.started.HasBeenNotified()
               ? grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "token revoked")
               : grpc::Status::OK;
  }));
  EXPECT_CALL(*stub, CompleteActions(_, _, _)).Times(0);
  DaemonOptions options = Options();
  options.lease_poll = absl::Milliseconds(20);
  options.cancel_grace = absl::Milliseconds(50);  // shorter than the wind-down
  farm::v1::WorkerCapabilities caps;
  caps.set_slots(1);
  {
    WorkerDaemon daemon(std::move(stub), options, caps, &executor);
    EXPECT_EQ(daemon.Run(stop).code(), absl::StatusCode::kUnauthenticated);
    // The lease thread was cancelled and joined, not left running against a daemon that is
    // about to be destroyed.
    EXPECT_EQ(ThreadsOfThisProcess(), threads_before);
  }
  EXPECT_TRUE(executor.started.HasBeenNotified());
}

}  // namespace
}  // namespace farm::worker
