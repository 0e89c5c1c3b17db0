#include "coordinator/reapi/bytestream_service.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "tests/support/reapi_test_server.h"

namespace farm::coordinator::reapi {
namespace {

namespace fs = std::filesystem;
namespace bs = ::google::bytestream;
using farm::testing::ReapiTestServer;
using ::testing::HasSubstr;

constexpr char kUuid[] = "3f1e2d4c-5b6a-4798-8a9b-0c1d2e3f4a5b";

std::string UploadName(const farm::v1::Digest& d) {
  return absl::StrCat("uploads/", kUuid, "/blobs/", d.hash(), "/", d.size_bytes());
}
std::string ReadName(const farm::v1::Digest& d) {
  return absl::StrCat("blobs/", d.hash(), "/", d.size_bytes());
}

class ByteStreamServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReapiTestServer::Start("reapi_bytestream_test", 16 << 20);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = bs::ByteStream::NewStub(server_->Channel());
  }
  // Writes `chunks` under `name`, finish_write on the last unless `finish` is false.
  grpc::Status Write(const std::string& name, const std::vector<std::string>& chunks,
                     bs::WriteResponse* resp,
                     const std::string& token = ReapiTestServer::kAdminToken, bool finish = true) {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    auto writer = stub_->Write(&ctx, resp);
    int64_t offset = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      bs::WriteRequest req;
      if (i == 0) req.set_resource_name(name);
      req.set_write_offset(offset);
      req.set_data(chunks[i]);
      req.set_finish_write(finish && i + 1 == chunks.size());
      offset += static_cast<int64_t>(chunks[i].size());
      if (!writer->Write(req)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }
  grpc::Status Read(const std::string& name, std::string* out, int64_t offset = 0,
                    int64_t limit = 0, const std::string& token = ReapiTestServer::kReadToken) {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    bs::ReadRequest req;
    req.set_resource_name(name);
    req.set_read_offset(offset);
    req.set_read_limit(limit);
    auto reader = stub_->Read(&ctx, req);
    bs::ReadResponse resp;
    out->clear();
    while (reader->Read(&resp)) out->append(resp.data());
    return reader->Finish();
  }
  int TempFiles() {
    return static_cast<int>(std::distance(
        fs::directory_iterator(server_->cas().dir() / "cas" / "tmp"), fs::directory_iterator()));
  }

  std::unique_ptr<ReapiTestServer> server_;
  std::unique_ptr<bs::ByteStream::Stub> stub_;
};

TEST_F(ByteStreamServiceTest, ABlobOfSeveralChunksRoundTripsInPieces) {
  std::string data(3 * (1 << 20) + 17, 'q');
  for (size_t i = 0; i < data.size(); i += 7) data[i] = static_cast<char>(i);
  const farm::v1::Digest d = DigestOfBytes(data);
  bs::WriteResponse resp;
  grpc::Status s = Write(UploadName(d) + "/client-metadata",
                         {data.substr(0, 1 << 20), data.substr(1 << 20)}, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.committed_size(), d.size_bytes());
  EXPECT_TRUE(server_->blobs()->Contains(d));

  std::string back;
  s = Read(ReadName(d), &back);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(back == data);
  s = Read(ReadName(d), &back, 100, 50);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(back, data.substr(100, 50));

  grpc::ClientContext ctx;
  AttachToken(ctx, ReapiTestServer::kAdminToken);
  bs::QueryWriteStatusRequest q;
  q.set_resource_name(UploadName(d));
  bs::QueryWriteStatusResponse status;
  ASSERT_TRUE(stub_->QueryWriteStatus(&ctx, q, &status).ok());
  EXPECT_TRUE(status.complete());
  EXPECT_EQ(status.committed_size(), d.size_bytes());
}

TEST_F(ByteStreamServiceTest, ABlobAlreadyStoredEndsTheWriteAtOnceWithItsFullSize) {
  const farm::v1::Digest d = DigestOfBytes("present");
  ASSERT_TRUE(server_->blobs()->PutBytes("present").ok());
  bs::WriteResponse resp;
  ASSERT_TRUE(Write(UploadName(d), {"pre"}, &resp, ReapiTestServer::kAdminToken, false).ok());
  EXPECT_EQ(resp.committed_size(), d.size_bytes());
  // The empty blob is always there.
  const farm::v1::Digest empty = DigestOfBytes("");
  ASSERT_TRUE(Write(UploadName(empty), {""}, &resp).ok());
  std::string back = "x";
  ASSERT_TRUE(Read(ReadName(empty), &back).ok());
  EXPECT_EQ(back, "");
}

TEST_F(ByteStreamServiceTest, LyingUploadsAreRefusedAndStoreNothing) {
  const farm::v1::Digest d = DigestOfBytes("the real bytes");
  bs::WriteResponse resp;
  grpc::Status s = Write(UploadName(d), {"the real bytez"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("nothing was stored"));
  EXPECT_THAT(s.error_message(), HasSubstr(DigestToString(DigestOfBytes("the real bytez"))));
  s = Write(UploadName(d), {"the real bytes", "and more"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("more bytes than its digest"));
  s = Write(UploadName(d), {"the real"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  s = Write(UploadName(d), {"the real bytes"}, &resp, ReapiTestServer::kAdminToken, false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("without finish_write"));
  EXPECT_EQ(server_->blobs()->blob_count(), 0u);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(ByteStreamServiceTest, BadNamesOffsetsAndOversizedBlobsAreRefused) {
  const farm::v1::Digest d = DigestOfBytes("abc");
  bs::WriteResponse resp;
  grpc::Status s =
      Write(absl::StrCat("uploads/", kUuid, "/blobs/../", d.hash(), "/3"), {"abc"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("'..' segment"));
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/blake3/", d.hash(), "/3"), {"abc"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("digest function 'blake3'"));
  // Over the store's quota (16 MiB here): refused before a byte is taken.
  farm::v1::Digest huge = d;
  huge.set_size_bytes(int64_t{1} << 30);
  s = Write(UploadName(huge), {"abc"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("larger than the whole CAS quota"));
  EXPECT_EQ(server_->blobs()->blob_count(), 0u);
  EXPECT_EQ(TempFiles(), 0);

  std::string back;
  EXPECT_EQ(Read(ReadName(d), &back).error_code(), grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(server_->blobs()->PutBytes("abc").ok());
  EXPECT_EQ(Read(ReadName(d), &back, 4).error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(Read(absl::StrCat("compressed-blobs/zstd/", d.hash(), "/3"), &back).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ByteStreamServiceTest, AReadTokenReadsButMayNotWrite) {
  const farm::v1::Digest d = DigestOfBytes("abc");
  bs::WriteResponse resp;
  grpc::Status s = Write(UploadName(d), {"abc"}, &resp, ReapiTestServer::kReadToken);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("'read' token may not call ByteStream.Write"));
  EXPECT_EQ(server_->blobs()->blob_count(), 0u);
  ASSERT_TRUE(server_->blobs()->PutBytes("abc").ok());
  std::string back;
  ASSERT_TRUE(Read(ReadName(d), &back).ok());
  EXPECT_EQ(back, "abc");
  EXPECT_EQ(Read(ReadName(d), &back, 0, 0, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace farm::coordinator::reapi
