#include "libfarm/client/farm_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/farm_service_mock.grpc.pb.h"

namespace farm {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::HasSubstr;
using ::testing::Return;
using ::testing::SetArgPointee;

TEST(FarmClientTest, UnreachableCoordinatorExplainsTheFix) {
  auto stub = std::make_unique<farm::v1::MockFarmServiceStub>();
  EXPECT_CALL(*stub, GetStatus(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused")));
  FarmClient client(std::move(stub), "127.0.0.1:9", "token");
  auto status = client.GetStatus();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.status().message()), HasSubstr("127.0.0.1:9"));
  EXPECT_THAT(std::string(status.status().message()), HasSubstr("farmctl up"));
}

TEST(FarmClientTest, PassesUnauthenticatedThrough) {
  auto stub = std::make_unique<farm::v1::MockFarmServiceStub>();
  EXPECT_CALL(*stub, ListWorkers(_, _, _))
      .WillOnce(Return(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "bad token")));
  FarmClient client(std::move(stub), "a:1", "token");
  EXPECT_EQ(client.ListWorkers().status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(FarmClientTest, ReturnsWorkers) {
  auto stub = std::make_unique<farm::v1::MockFarmServiceStub>();
  farm::v1::ListWorkersResponse resp;
  resp.add_workers()->set_name("w1");
  EXPECT_CALL(*stub, ListWorkers(_, _, _))
      .WillOnce(DoAll(SetArgPointee<2>(resp), Return(grpc::Status::OK)));
  FarmClient client(std::move(stub), "a:1", "token");
  auto workers = client.ListWorkers();
  ASSERT_TRUE(workers.ok());
  ASSERT_EQ(workers->workers_size(), 1);
  EXPECT_EQ(workers->workers(0).name(), "w1");
}

}  // namespace
}  // namespace farm
