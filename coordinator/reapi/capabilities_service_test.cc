#include "coordinator/reapi/capabilities_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/cas/cas_limits.h"
#include "tests/support/reapi_test_server.h"

namespace farm::coordinator::reapi {
namespace {

using farm::testing::ReapiTestServer;
namespace rev2 = ::build::bazel::remote::execution::v2;

class CapabilitiesServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReapiTestServer::Start("reapi_capabilities_test");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = rev2::Capabilities::NewStub(server_->Channel());
  }
  grpc::Status Get(const std::string& token, rev2::ServerCapabilities* caps,
                   const std::string& instance = "") {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    rev2::GetCapabilitiesRequest req;
    req.set_instance_name(instance);
    return stub_->GetCapabilities(&ctx, req, caps);
  }

  std::unique_ptr<ReapiTestServer> server_;
  std::unique_ptr<rev2::Capabilities::Stub> stub_;
};

TEST_F(CapabilitiesServiceTest, ACacheOnlyEndpointOfSha256AtApi2_0) {
  rev2::ServerCapabilities caps;
  grpc::Status s = Get(ReapiTestServer::kReadToken, &caps);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(caps.has_cache_capabilities());
  const rev2::CacheCapabilities& cache = caps.cache_capabilities();
  ASSERT_EQ(cache.digest_functions_size(), 1);
  EXPECT_EQ(cache.digest_functions(0), rev2::DigestFunction::SHA256);
  EXPECT_FALSE(cache.action_cache_update_capabilities().update_enabled());
  EXPECT_TRUE(cache.supported_compressors().empty());
  // A real limit, and below the coordinator's gRPC message limit with room for framing.
  EXPECT_GT(cache.max_batch_total_size_bytes(), 0);
  EXPECT_LT(cache.max_batch_total_size_bytes(), kCasMaxMessageBytes);
  EXPECT_FALSE(caps.has_execution_capabilities());
  EXPECT_EQ(caps.low_api_version().major(), 2);
  EXPECT_EQ(caps.low_api_version().minor(), 0);
  EXPECT_EQ(caps.high_api_version().major(), 2);
  EXPECT_EQ(caps.high_api_version().minor(), 0);
}

// update_enabled is the truth for the caller's token: admins write the action cache; other
// roles only when the operator grants them (--reapi-action-cache-writers).
TEST_F(CapabilitiesServiceTest, UpdateEnabledExactlyForTokensThatMayWrite) {
  rev2::ServerCapabilities caps;
  ASSERT_TRUE(Get(ReapiTestServer::kAdminToken, &caps).ok());
  EXPECT_TRUE(caps.cache_capabilities().action_cache_update_capabilities().update_enabled());
  ASSERT_TRUE(Get(ReapiTestServer::kSubmitToken, &caps).ok());
  EXPECT_FALSE(caps.cache_capabilities().action_cache_update_capabilities().update_enabled());

  auto granted = ReapiTestServer::Start("reapi_capabilities_granted", 64 << 20,
                                        {{"ActionCache.UpdateActionResult", {Role::kSubmit}}});
  ASSERT_TRUE(granted.ok()) << granted.status();
  auto stub = rev2::Capabilities::NewStub((*granted)->Channel());
  for (const auto& [token, enabled] : {std::pair{ReapiTestServer::kSubmitToken, true},
                                       std::pair{ReapiTestServer::kReadToken, false}}) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::ServerCapabilities got;
    ASSERT_TRUE(stub->GetCapabilities(&ctx, rev2::GetCapabilitiesRequest(), &got).ok());
    EXPECT_EQ(got.cache_capabilities().action_cache_update_capabilities().update_enabled(), enabled)
        << token;
  }
}

TEST_F(CapabilitiesServiceTest, NeedsATokenAndTheEmptyInstance) {
  rev2::ServerCapabilities caps;
  EXPECT_EQ(Get("", &caps).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status s = Get(ReapiTestServer::kAdminToken, &caps, "other");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("unknown instance name 'other'"));
}

}  // namespace
}  // namespace farm::coordinator::reapi
