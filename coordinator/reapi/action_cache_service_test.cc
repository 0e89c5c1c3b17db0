#include "coordinator/reapi/action_cache_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/reapi/request_checks.h"
#include "libfarm/digest/digest.h"
#include "tests/support/reapi_test_server.h"

namespace farm::coordinator::reapi {
namespace {

using farm::testing::ReapiTestServer;
using ::testing::HasSubstr;
namespace rev2 = ::build::bazel::remote::execution::v2;

rev2::Digest DigestOf(const std::string& bytes) { return ToReapiDigest(DigestOfBytes(bytes)); }

class ActionCacheServiceTest : public ::testing::Test {
 protected:
  // A small quota, so a test can evict a result's blob by storing others.
  static constexpr uint64_t kQuota = 4096;

  void SetUp() override {
    auto server = ReapiTestServer::Start("reapi_action_cache_test", kQuota);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = rev2::ActionCache::NewStub(server_->Channel());
  }
  rev2::Digest Stored(const std::string& bytes) {
    auto d = server_->blobs()->PutBytes(bytes);
    EXPECT_TRUE(d.ok()) << d.status();
    return ToReapiDigest(*d);
  }
  grpc::Status Update(const rev2::Digest& action, const rev2::ActionResult& result,
                      const std::string& token = ReapiTestServer::kAdminToken,
                      const std::string& instance = "",
                      rev2::DigestFunction::Value function = rev2::DigestFunction::SHA256) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::UpdateActionResultRequest req;
    req.set_instance_name(instance);
    req.set_digest_function(function);
    *req.mutable_action_digest() = action;
    *req.mutable_action_result() = result;
    rev2::ActionResult stored;
    return stub_->UpdateActionResult(&ctx, req, &stored);
  }
  grpc::Status Get(const rev2::Digest& action, rev2::ActionResult* result,
                   const std::string& token = ReapiTestServer::kReadToken) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::GetActionResultRequest req;
    *req.mutable_action_digest() = action;
    return stub_->GetActionResult(&ctx, req, result);
  }
  // A result with one output file, stdout in the CAS and exit code 0.
  rev2::ActionResult ResultWith(const std::string& output, const std::string& path = "out/a.o") {
    rev2::ActionResult result;
    auto* file = result.add_output_files();
    file->set_path(path);
    *file->mutable_digest() = Stored(output);
    *result.mutable_stdout_digest() = Stored("compiled\n");
    return result;
  }

  std::unique_ptr<ReapiTestServer> server_;
  std::unique_ptr<rev2::ActionCache::Stub> stub_;
};

TEST_F(ActionCacheServiceTest, AStoredResultIsReadBackByAnyReaderAndSurvivesInTheStateStore) {
  const rev2::Digest action = DigestOf("action 1");
  rev2::ActionResult none;
  EXPECT_EQ(Get(action, &none).error_code(), grpc::StatusCode::NOT_FOUND);

  rev2::ActionResult result = ResultWith("object code");
  result.set_exit_code(0);
  ASSERT_TRUE(Update(action, result).ok());
  rev2::ActionResult got;
  grpc::Status s = Get(action, &got);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(got.SerializeAsString(), result.SerializeAsString());
  // Kept in RocksDB under the action's hash, in its own table.
  rev2::ActionResult row;
  EXPECT_TRUE(server_->state()->Get(Table::kReapiActionCache, action.hash(), &row).ok());
  EXPECT_FALSE(server_->state()->Get(Table::kActionCache, action.hash(), &row).ok());
}

TEST_F(ActionCacheServiceTest, AResultWhoseBlobLeftTheCasIsNotFound) {
  const rev2::Digest action = DigestOf("action evicted");
  ASSERT_TRUE(Update(action, ResultWith(std::string(1500, 'x'))).ok());
  // Newer blobs push the output out of the small CAS (least recently used first).
  Stored(std::string(1500, 'y'));
  Stored(std::string(1500, 'z'));
  ASSERT_FALSE(server_->blobs()->Contains(DigestOfBytes(std::string(1500, 'x'))));
  rev2::ActionResult got;
  grpc::Status s = Get(action, &got);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("output file 'out/a.o'"));
}

TEST_F(ActionCacheServiceTest, AnOutputDirectoryIsWholeOnlyWithItsTreeAndItsFiles) {
  rev2::Tree tree;
  auto* file = tree.mutable_root()->add_files();
  file->set_name("gen.h");
  *file->mutable_digest() = DigestOf("not stored");
  rev2::ActionResult result;
  auto* dir = result.add_output_directories();
  dir->set_path("gen");
  *dir->mutable_tree_digest() = Stored(tree.SerializeAsString());
  grpc::Status s = Update(DigestOf("action tree"), result);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("file 'gen.h' of output directory 'gen'"));

  *file->mutable_digest() = Stored("#define GEN 1\n");
  *dir->mutable_tree_digest() = Stored(tree.SerializeAsString());
  ASSERT_TRUE(Update(DigestOf("action tree"), result).ok());
  rev2::ActionResult got;
  EXPECT_TRUE(Get(DigestOf("action tree"), &got).ok());
}

TEST_F(ActionCacheServiceTest, AResultNamingABlobTheCasLacksIsRefusedAndNothingStored) {
  rev2::ActionResult result = ResultWith("object");
  *result.mutable_output_files(0)->mutable_digest() = DigestOf("never uploaded");
  grpc::Status s = Update(DigestOf("action missing"), result);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("Fix: upload the outputs to the CAS first"));
  rev2::ActionResult got;
  EXPECT_EQ(Get(DigestOf("action missing"), &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ActionCacheServiceTest, PathsOutsideTheWorkingDirectoryAreRefused) {
  for (const std::string path :
       {"../etc/passwd", "/abs/a.o", "out/../../a.o", "out//a.o", "", "./a.o"}) {
    grpc::Status s = Update(DigestOf("action path"), ResultWith("object", path));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path;
  }
  rev2::ActionResult link_result = ResultWith("object");
  auto* link = link_result.add_output_symlinks();
  link->set_path("out/link");
  link->set_target("/etc/passwd");
  EXPECT_EQ(Update(DigestOf("action path"), link_result).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  rev2::ActionResult got;
  EXPECT_EQ(Get(DigestOf("action path"), &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ActionCacheServiceTest, OversizedResultsOtherInstancesAndDigestFunctionsAreRefused) {
  rev2::ActionResult big = ResultWith("object");
  big.set_stdout_raw(std::string(kMaxActionResultBytes + 1, 'l'));
  grpc::Status s = Update(DigestOf("action big"), big);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("stdout_digest"));
  EXPECT_EQ(Update(DigestOf("action i"), ResultWith("o"), ReapiTestServer::kAdminToken, "other")
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Update(DigestOf("action i"), ResultWith("o"), ReapiTestServer::kAdminToken, "",
                   rev2::DigestFunction::SHA1)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  rev2::Digest bad_action = DigestOf("action");
  bad_action.set_hash("not-hex");
  EXPECT_EQ(Update(bad_action, ResultWith("o")).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ActionCacheServiceTest, OnlyAdminsWriteByDefaultAndGrantedRolesWhenTheOperatorSaysSo) {
  for (const char* token : {ReapiTestServer::kReadToken, ReapiTestServer::kSubmitToken}) {
    grpc::Status s = Update(DigestOf("action roles"), ResultWith("object"), token);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << token;
    EXPECT_THAT(s.error_message(), HasSubstr("roles that may: admin"));
  }
  rev2::ActionResult got;
  EXPECT_EQ(Get(DigestOf("action roles"), &got).error_code(), grpc::StatusCode::NOT_FOUND);

  auto granted = ReapiTestServer::Start("reapi_action_cache_granted", kQuota,
                                        {{"ActionCache.UpdateActionResult", {Role::kSubmit}}});
  ASSERT_TRUE(granted.ok()) << granted.status();
  server_ = std::move(*granted);
  stub_ = rev2::ActionCache::NewStub(server_->Channel());
  EXPECT_TRUE(
      Update(DigestOf("action roles"), ResultWith("object"), ReapiTestServer::kSubmitToken).ok());
  EXPECT_EQ(Update(DigestOf("action roles"), ResultWith("object"), ReapiTestServer::kReadToken)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Get(DigestOf("action roles"), &got).ok());
}

}  // namespace
}  // namespace farm::coordinator::reapi
