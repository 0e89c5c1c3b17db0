#include "coordinator/reapi/content_addressable_storage_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/reapi/capabilities_service.h"
#include "coordinator/reapi/request_checks.h"
#include "libfarm/digest/digest.h"
#include "tests/support/reapi_test_server.h"

namespace farm::coordinator::reapi {
namespace {

using farm::testing::ReapiTestServer;
using ::testing::HasSubstr;
namespace rev2 = ::build::bazel::remote::execution::v2;

rev2::Digest DigestOf(const std::string& bytes) { return ToReapiDigest(DigestOfBytes(bytes)); }

class ContentAddressableStorageServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReapiTestServer::Start("reapi_cas_service_test");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = rev2::ContentAddressableStorage::NewStub(server_->Channel());
  }
  void Token(grpc::ClientContext& ctx, const std::string& token) {
    if (!token.empty()) AttachToken(ctx, token);
  }
  grpc::Status Update(const std::vector<std::pair<rev2::Digest, std::string>>& blobs,
                      rev2::BatchUpdateBlobsResponse* resp,
                      const std::string& token = ReapiTestServer::kAdminToken,
                      rev2::DigestFunction::Value function = rev2::DigestFunction::UNKNOWN) {
    grpc::ClientContext ctx;
    Token(ctx, token);
    rev2::BatchUpdateBlobsRequest req;
    req.set_digest_function(function);
    for (const auto& [digest, data] : blobs) {
      auto* r = req.add_requests();
      *r->mutable_digest() = digest;
      r->set_data(data);
    }
    return stub_->BatchUpdateBlobs(&ctx, req, resp);
  }
  grpc::Status Read(const std::vector<rev2::Digest>& digests, rev2::BatchReadBlobsResponse* resp,
                    const std::string& token = ReapiTestServer::kAdminToken) {
    grpc::ClientContext ctx;
    Token(ctx, token);
    rev2::BatchReadBlobsRequest req;
    for (const rev2::Digest& d : digests) *req.add_digests() = d;
    return stub_->BatchReadBlobs(&ctx, req, resp);
  }
  grpc::Status FindMissing(const std::vector<rev2::Digest>& digests,
                           rev2::FindMissingBlobsResponse* resp,
                           rev2::DigestFunction::Value function = rev2::DigestFunction::SHA256) {
    grpc::ClientContext ctx;
    Token(ctx, ReapiTestServer::kReadToken);
    rev2::FindMissingBlobsRequest req;
    req.set_digest_function(function);
    for (const rev2::Digest& d : digests) *req.add_blob_digests() = d;
    return stub_->FindMissingBlobs(&ctx, req, resp);
  }

  std::unique_ptr<ReapiTestServer> server_;
  std::unique_ptr<rev2::ContentAddressableStorage::Stub> stub_;
};

TEST_F(ContentAddressableStorageServiceTest, BlobsGoUpComeBackAndAreFoundInTheFarmsStore) {
  rev2::BatchUpdateBlobsResponse up;
  grpc::Status s = Update({{DigestOf("one"), "one"}, {DigestOf("two"), "two"}}, &up);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(up.responses_size(), 2);
  for (const auto& r : up.responses()) EXPECT_EQ(r.status().code(), 0) << r.status().message();
  // The farm's own store holds them: one store for both APIs.
  EXPECT_TRUE(server_->blobs()->Contains(DigestOfBytes("one")));
  EXPECT_EQ(server_->blobs()->blob_count(), 2u);

  rev2::BatchReadBlobsResponse back;
  s = Read({DigestOf("two"), DigestOf("one"), DigestOf("three")}, &back,
           ReapiTestServer::kReadToken);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(back.responses_size(), 3);
  EXPECT_EQ(back.responses(0).data(), "two");
  EXPECT_EQ(back.responses(1).data(), "one");
  EXPECT_EQ(back.responses(2).status().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(back.responses(2).status().message(), HasSubstr("is not in the CAS"));

  rev2::FindMissingBlobsResponse missing;
  ASSERT_TRUE(FindMissing({DigestOf("one"), DigestOf("three")}, &missing).ok());
  ASSERT_EQ(missing.missing_blob_digests_size(), 1);
  EXPECT_EQ(missing.missing_blob_digests(0).hash(), DigestOf("three").hash());
}

TEST_F(ContentAddressableStorageServiceTest, TheEmptyBlobIsAlwaysPresent) {
  rev2::FindMissingBlobsResponse missing;
  ASSERT_TRUE(FindMissing({DigestOf("")}, &missing).ok());
  EXPECT_EQ(missing.missing_blob_digests_size(), 0);
  rev2::BatchReadBlobsResponse back;
  ASSERT_TRUE(Read({DigestOf("")}, &back).ok());
  ASSERT_EQ(back.responses_size(), 1);
  EXPECT_EQ(back.responses(0).status().code(), 0);
  EXPECT_EQ(back.responses(0).data(), "");
}

TEST_F(ContentAddressableStorageServiceTest, EachBadBlobIsRefusedOnItsOwnAndNothingIsStored) {
  rev2::Digest wrong_size = DigestOf("short");
  wrong_size.set_size_bytes(99);
  rev2::Digest not_a_hash;
  not_a_hash.set_hash("../../etc/passwd");
  not_a_hash.set_size_bytes(3);
  rev2::BatchUpdateBlobsResponse up;
  grpc::Status s = Update({{DigestOf("good"), "good"},
                           {DigestOf("the real bytes"), "the real bytez"},
                           {wrong_size, "short"},
                           {not_a_hash, "abc"}},
                          &up);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(up.responses_size(), 4);
  EXPECT_EQ(up.responses(0).status().code(), 0);
  EXPECT_EQ(up.responses(1).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(up.responses(1).status().message(), HasSubstr("nothing was stored"));
  EXPECT_THAT(up.responses(1).status().message(),
              HasSubstr(DigestToString(DigestOfBytes("the real bytez"))));
  EXPECT_EQ(up.responses(2).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(up.responses(2).status().message(), HasSubstr("not the digest's size"));
  EXPECT_EQ(up.responses(3).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(up.responses(3).status().message(), HasSubstr("64 lowercase hex"));
  EXPECT_EQ(server_->blobs()->blob_count(), 1u);
}

TEST_F(ContentAddressableStorageServiceTest, WholeCallsAreRefusedForDigestFunctionAndBatchLimit) {
  rev2::BatchUpdateBlobsResponse up;
  grpc::Status s = Update({{DigestOf("x"), "x"}}, &up, ReapiTestServer::kAdminToken,
                          rev2::DigestFunction::BLAKE3);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("digest function BLAKE3 is not supported"));
  rev2::FindMissingBlobsResponse missing;
  s = FindMissing({DigestOf("x")}, &missing, rev2::DigestFunction::MD5);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  const std::string big(static_cast<size_t>(MaxBatchTotalSizeBytes()) + 1, 'b');
  s = Update({{DigestOf(big), big}}, &up);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("max_batch_total_size_bytes"));
  rev2::BatchReadBlobsResponse back;
  s = Read({DigestOf(big)}, &back);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(server_->blobs()->blob_count(), 0u);
}

TEST_F(ContentAddressableStorageServiceTest, AReadTokenReadsButMayNotWrite) {
  rev2::BatchUpdateBlobsResponse up;
  grpc::Status s = Update({{DigestOf("x"), "x"}}, &up, ReapiTestServer::kReadToken);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("'read' token may not call ContentAddressableStorage.BatchUpdateBlobs"));
  EXPECT_EQ(Update({{DigestOf("x"), "x"}}, &up, "").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(server_->blobs()->blob_count(), 0u);
}

// Stores `directory` in the farm's store and returns its digest.
rev2::Digest Put(BlobStore* store, const rev2::Directory& directory) {
  const std::string bytes = directory.SerializeAsString();
  EXPECT_TRUE(store->PutBytes(bytes).ok());
  return DigestOf(bytes);
}

void AddChild(rev2::Directory& parent, const std::string& name, const rev2::Digest& digest) {
  auto* node = parent.add_directories();
  node->set_name(name);
  *node->mutable_digest() = digest;
}

TEST_F(ContentAddressableStorageServiceTest, GetTreeStreamsTheTreeInPagesThatResume) {
  // root -> {a, b (the same directory as a), m (missing)}; a -> {c}; c -> {} (the empty blob).
  rev2::Directory c;
  const rev2::Digest c_digest = DigestOf(c.SerializeAsString());
  rev2::Directory a;
  AddChild(a, "c", c_digest);
  a.add_files()->set_name("file-of-a");
  const rev2::Digest a_digest = Put(server_->blobs(), a);
  rev2::Directory root;
  AddChild(root, "a", a_digest);
  AddChild(root, "b", a_digest);
  AddChild(root, "m", DigestOf("not stored"));
  const rev2::Digest root_digest = Put(server_->blobs(), root);

  auto walk = [&](const std::string& token, int page_size, std::vector<std::string>* tokens) {
    grpc::ClientContext ctx;
    AttachToken(ctx, ReapiTestServer::kReadToken);
    rev2::GetTreeRequest req;
    *req.mutable_root_digest() = root_digest;
    req.set_page_size(page_size);
    req.set_page_token(token);
    auto reader = stub_->GetTree(&ctx, req);
    std::vector<rev2::Directory> got;
    rev2::GetTreeResponse page;
    while (reader->Read(&page)) {
      for (const auto& d : page.directories()) got.push_back(d);
      tokens->push_back(page.next_page_token());
    }
    grpc::Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return got;
  };
  std::vector<std::string> tokens;
  std::vector<rev2::Directory> all = walk("", 2, &tokens);
  // Each directory once, breadth first; the missing one left out.
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].SerializeAsString(), root.SerializeAsString());
  EXPECT_EQ(all[1].SerializeAsString(), a.SerializeAsString());
  EXPECT_EQ(all[2].SerializeAsString(), c.SerializeAsString());
  EXPECT_EQ(tokens, (std::vector<std::string>{"2", ""}));
  std::vector<std::string> rest_tokens;
  std::vector<rev2::Directory> rest = walk("2", 2, &rest_tokens);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].SerializeAsString(), c.SerializeAsString());
}

TEST_F(ContentAddressableStorageServiceTest, GetTreeOfAMissingRootIsNotFoundAndTokensAreChecked) {
  for (const auto& [token, code] : std::vector<std::pair<std::string, grpc::StatusCode>>{
           {"", grpc::StatusCode::NOT_FOUND},
           {"x", grpc::StatusCode::INVALID_ARGUMENT},
           {"-1", grpc::StatusCode::INVALID_ARGUMENT}}) {
    grpc::ClientContext ctx;
    AttachToken(ctx, ReapiTestServer::kAdminToken);
    rev2::GetTreeRequest req;
    *req.mutable_root_digest() = DigestOf("no such directory");
    req.set_page_token(token);
    auto reader = stub_->GetTree(&ctx, req);
    rev2::GetTreeResponse resp;
    EXPECT_FALSE(reader->Read(&resp));
    grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), code) << token << ": " << s.error_message();
    if (code == grpc::StatusCode::NOT_FOUND) {
      EXPECT_THAT(s.error_message(), HasSubstr("tree root"));
    }
  }
}

}  // namespace
}  // namespace farm::coordinator::reapi
