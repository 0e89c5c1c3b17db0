#include "libfarm/rpc/request_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/rpc/grpc_status.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

TEST(RequestLimitsTest, ALongNameIsRefusedNamingTheFieldAndTheLimitNotEchoingIt) {
  farm::v1::SubmitBuildRequest r;
  r.set_recipe(std::string(100000, 'a'));
  absl::Status s = CheckSubmitBuildRequest(r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("the recipe name is 100000 bytes; the limit is 256"));
  EXPECT_THAT(s.message(), HasSubstr("Fix:"));
  EXPECT_LT(s.message().size(), 400u);

  r.set_recipe("pytorch-2.9.1");
  EXPECT_TRUE(CheckSubmitBuildRequest(r).ok());
  r.set_archs(std::string(2000, ';'));
  EXPECT_THAT(CheckSubmitBuildRequest(r).message(), HasSubstr("the arch list (--archs)"));
  EXPECT_EQ(CheckBuildId(std::string(257, 'x')).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckBuildId(std::string(256, 'x')).ok());
}

TEST(RequestLimitsTest, ASourceListThatWouldNotFitInAMessageIsRefusedWithItsCount) {
  EXPECT_TRUE(CheckSourceListSize("src", 20000, 20000 * 40).ok());
  absl::Status s = CheckSourceListSize("src", 100011, 100011 * 40);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("src has 100011 files"));
  EXPECT_THAT(s.message(), HasSubstr("Nothing was uploaded. Fix:"));

  // The coordinator's own check, on the list as sent.
  farm::v1::SubmitBuildRequest r;
  r.set_recipe("demo-0.1.0");
  for (int i = 0; i < 40000; ++i) {
    auto* f = r.add_source();
    f->set_path("pkg/some/module_" + std::to_string(i) + ".py");
    f->mutable_digest()->set_hash(std::string(64, 'a'));
    f->mutable_digest()->set_size_bytes(1234);
  }
  EXPECT_THAT(CheckSubmitBuildRequest(r).message(), HasSubstr("(40000 files); the limit is"));
  r.mutable_source()->DeleteSubrange(1000, 39000);
  EXPECT_TRUE(CheckSubmitBuildRequest(r).ok());
}

TEST(RequestLimitsTest, LabelsAreBoundedInCountAndSize) {
  farm::v1::WorkerCapabilities caps;
  (*caps.mutable_labels())["rack"] = "r1";
  EXPECT_TRUE(CheckWorkerLabels(caps).ok());
  (*caps.mutable_labels())["big"] = std::string(300, 'v');
  EXPECT_THAT(CheckWorkerLabels(caps).message(), HasSubstr("label 'big' is 300 bytes"));
  caps.mutable_labels()->erase("big");
  for (int i = 0; i < 70; ++i) (*caps.mutable_labels())["k" + std::to_string(i)] = "v";
  EXPECT_THAT(CheckWorkerLabels(caps).message(), HasSubstr("the limit is 64"));
}

TEST(RequestLimitsTest, ErrorsSentOverGrpcAreCutToFitItsMetadata) {
  const std::string huge = "no build '" + std::string(100000, 'b') + "\xc3\xa9'";
  grpc::Status g = ToGrpcStatus(absl::NotFoundError(huge));
  EXPECT_EQ(g.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(g.error_message().size(), kMaxErrorMessageBytes + 64);
  EXPECT_THAT(g.error_message(), HasSubstr("more bytes of this error cut]"));
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("short")).error_message(), "short");
  // A cut never splits a UTF-8 sequence.
  std::string utf8;
  for (int i = 0; i < 3000; ++i) utf8 += "\xc3\xa9";
  const std::string cut = BoundedErrorMessage(utf8);
  const size_t body = cut.find("\xe2\x80\xa6");  // the ellipsis
  ASSERT_NE(body, std::string::npos);
  EXPECT_EQ(body % 2, 0u);
}

}  // namespace
}  // namespace farm
