#include "libfarm/client/build_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/builds_mock.grpc.pb.h"

namespace farm {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::Return;
using ::testing::SaveArg;

TEST(BuildClientTest, ReportCompileCallSendsTheKindOutcomeCodeAndAReportableReason) {
  auto stub = std::make_unique<farm::v1::MockBuildServiceStub>();
  farm::v1::ReportNvccCallRequest sent;
  EXPECT_CALL(*stub, ReportNvccCall(_, _, _))
      .WillOnce(DoAll(SaveArg<1>(&sent), Return(grpc::Status::OK)));
  BuildClient client(std::move(stub), "a:1", "token");
  ASSERT_TRUE(client
                  .ReportCompileCall("b1", farm::v1::COMPILE_CALL_KIND_HOST,
                                     farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
                                     farm::v1::FALLBACK_REASON_NO_WORKER,
                                     "no worker has 'g++-13'\x1b[2J\n" + std::string(2000, 'x'))
                  .ok());
  EXPECT_EQ(sent.build_id(), "b1");
  EXPECT_EQ(sent.kind(), farm::v1::COMPILE_CALL_KIND_HOST);
  EXPECT_EQ(sent.outcome(), farm::v1::NVCC_CALL_OUTCOME_FALLBACK);
  EXPECT_EQ(sent.reason_code(), farm::v1::FALLBACK_REASON_NO_WORKER);
  EXPECT_EQ(sent.reason().size(), 1024u);
  EXPECT_EQ(sent.reason().substr(0, 28), "no worker has 'g++-13'?[2J\nx");
}

TEST(BuildClientTest, ReportNvccCallKeepsTheDefaultKind) {
  auto stub = std::make_unique<farm::v1::MockBuildServiceStub>();
  farm::v1::ReportNvccCallRequest sent;
  EXPECT_CALL(*stub, ReportNvccCall(_, _, _))
      .WillOnce(DoAll(SaveArg<1>(&sent), Return(grpc::Status::OK)));
  BuildClient client(std::move(stub), "a:1", "token");
  farm::v1::ReportNvccCallRequest request;
  request.set_build_id("b1");
  request.set_outcome(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  ASSERT_TRUE(client.ReportNvccCall(request).ok());
  EXPECT_EQ(sent.kind(), farm::v1::COMPILE_CALL_KIND_NVCC);
}

TEST(BuildClientTest, ReportCompileCallRefusesAnOversizedBuildIdWithoutCalling) {
  auto stub = std::make_unique<farm::v1::MockBuildServiceStub>();
  EXPECT_CALL(*stub, ReportNvccCall(_, _, _)).Times(0);
  BuildClient client(std::move(stub), "a:1", "token");
  EXPECT_FALSE(client
                   .ReportCompileCall(std::string(100'000, 'b'), farm::v1::COMPILE_CALL_KIND_HOST,
                                      farm::v1::NVCC_CALL_OUTCOME_SPLIT)
                   .ok());
}

}  // namespace
}  // namespace farm
