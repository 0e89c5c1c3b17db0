#include "coordinator/cas/cas_service.h"

#include <filesystem>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "libfarm/cas/cas_client.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "tests/support/temp_blob_store.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

class CasServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cas = farm::testing::TempBlobStore::Open("cas_service_test", 64 << 20);
    ASSERT_TRUE(cas.ok()) << cas.status();
    cas_ = std::move(*cas);
    service_ = std::make_unique<CasServiceImpl>(&gate_, cas_->blobs(), &metrics_);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = farm::v1::CasService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    server_->Shutdown();
    cas_.reset();
  }
  std::unique_ptr<CasClient> Client(CasClientOptions options = {}) {
    return std::make_unique<CasClient>(farm::v1::CasService::NewStub(server_->InProcessChannel({})),
                                       kToken, options);
  }
  // Drives Upload through the raw stub, so the test can lie about the digest.
  grpc::Status RawUpload(const farm::v1::Digest& claimed, const std::vector<std::string>& chunks,
                         farm::v1::UploadResponse* resp, const std::string& token = kToken) {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    auto writer = stub_->Upload(&ctx, resp);
    bool first = true;
    for (const auto& c : chunks) {
      farm::v1::UploadRequest req;
      if (first) *req.mutable_digest() = claimed;
      first = false;
      req.set_data(c);
      if (!writer->Write(req)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }
  int TempFiles() {
    return static_cast<int>(std::distance(fs::directory_iterator(cas_->dir() / "cas" / "tmp"),
                                          fs::directory_iterator()));
  }

  TokenVerifier auth_{kToken};
  MetricsRegistry metrics_;
  RpcGate gate_{&auth_, &metrics_};
  std::unique_ptr<farm::testing::TempBlobStore> cas_;
  std::unique_ptr<CasServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<farm::v1::CasService::Stub> stub_;
};

TEST_F(CasServiceTest, RoundTripWithAndWithoutZstd) {
  std::string data(3 * (1 << 20) + 11, 'q');
  for (size_t i = 0; i < data.size(); i += 7) data[i] = static_cast<char>(i);
  for (bool compress : {false, true}) {
    auto client = Client({.compress = compress});
    data[0] = compress ? 'z' : 'n';
    auto d = client->UploadBytes(data);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(cas_->blobs()->Contains(*d));
    auto back = client->DownloadBytes(*d, 1 << 30);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(*back == data);
  }
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("farm_cas_blobs 2"), std::string::npos) << text;
  EXPECT_NE(text.find("farm_cas_bytes_in_total"), std::string::npos);
  EXPECT_NE(text.find("farm_cas_bytes_out_total"), std::string::npos);
  EXPECT_NE(text.find("farm_cas_bytes_stored"), std::string::npos);
}

TEST_F(CasServiceTest, CorruptUploadIsRejectedAndNothingIsStored) {
  const farm::v1::Digest claimed = DigestOfBytes("the real bytes");
  farm::v1::UploadResponse resp;
  grpc::Status s = RawUpload(claimed, {"the real bytez"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("expected " + DigestToString(claimed)), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find(DigestToString(DigestOfBytes("the real bytez"))),
            std::string::npos);
  // Longer than claimed: refused mid-stream.
  s = RawUpload(claimed, {"the real bytes", "and more"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Shorter than claimed.
  s = RawUpload(claimed, {"the real"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A digest that is not a hash at all (would be a path if trusted).
  farm::v1::Digest evil;
  evil.set_hash("../../../etc/passwd");
  evil.set_size_bytes(3);
  s = RawUpload(evil, {"abc"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(cas_->blobs()->blob_count(), 0u);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(CasServiceTest, ExistingBlobUploadIsANoOp) {
  const farm::v1::Digest d = DigestOfBytes("twice");
  farm::v1::UploadResponse resp;
  ASSERT_TRUE(RawUpload(d, {"twice"}, &resp).ok());
  EXPECT_FALSE(resp.already_present());
  ASSERT_TRUE(RawUpload(d, {"twice"}, &resp).ok());
  EXPECT_TRUE(resp.already_present());
  EXPECT_EQ(cas_->blobs()->blob_count(), 1u);
}

TEST_F(CasServiceTest, MissingOrWrongTokenIsUnauthenticatedEverywhere) {
  const farm::v1::Digest d = DigestOfBytes("secret");
  farm::v1::UploadResponse resp;
  EXPECT_EQ(RawUpload(d, {"secret"}, &resp, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(RawUpload(d, {"secret"}, &resp, "ffffffffffffffffffffffffffffffff").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(cas_->blobs()->blob_count(), 0u);
  ASSERT_TRUE(cas_->blobs()->PutBytes("secret").ok());
  auto intruder =
      std::make_unique<CasClient>(farm::v1::CasService::NewStub(server_->InProcessChannel({})), "");
  EXPECT_EQ(intruder->Stat(d).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(intruder->FindMissing({d}).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(intruder->DownloadBytes(d, 100).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(CasServiceTest, FindMissingStatAndNotFound) {
  auto client = Client();
  auto have = client->UploadBytes("have");
  ASSERT_TRUE(have.ok());
  const farm::v1::Digest lack = DigestOfBytes("lack");
  auto missing = client->FindMissing({*have, lack});
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(missing->size(), 1u);
  EXPECT_EQ((*missing)[0].hash(), lack.hash());
  auto stat = client->Stat(*have);
  ASSERT_TRUE(stat.ok());
  EXPECT_TRUE(stat->present());
  EXPECT_EQ(client->DownloadBytes(lack, 100).status().code(), absl::StatusCode::kNotFound);
  auto lack_stat = client->Stat(lack);
  ASSERT_TRUE(lack_stat.ok());
  EXPECT_FALSE(lack_stat->present());
}

// A client that sends a tree as directories by digest asks about its tree blobs; the store
// answers for the files they name.
TEST_F(CasServiceTest, FindMissingWalksTheTreesItHolds) {
  auto client = Client();
  auto have = client->UploadBytes("have");
  ASSERT_TRUE(have.ok());
  const farm::v1::Digest lack = DigestOfBytes("lack");
  farm::v1::FileTree tree;
  for (const auto& [name, digest] : {std::pair{"have.h", *have}, std::pair{"lack.h", lack}}) {
    farm::v1::InputFile* f = tree.add_files();
    f->set_path(name);
    *f->mutable_digest() = digest;
  }
  const farm::v1::Digest unsent = DigestOfBytes(SerializeFileTree(tree));
  auto before = client->FindMissingWithTrees({*have}, {unsent});
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(before->has_value());
  ASSERT_EQ((*before)->size(), 1u);
  EXPECT_EQ((**before)[0].hash(), unsent.hash());

  auto sent = client->UploadBytes(SerializeFileTree(tree));
  ASSERT_TRUE(sent.ok());
  auto after = client->FindMissingWithTrees({}, {*sent});
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_TRUE(after->has_value());
  ASSERT_EQ((*after)->size(), 1u);
  EXPECT_EQ((**after)[0].hash(), lack.hash());
}

}  // namespace
}  // namespace farm::coordinator
