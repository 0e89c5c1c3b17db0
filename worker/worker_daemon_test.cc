#include "worker/worker_daemon.h"

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

}  // namespace
}  // namespace farm::worker
