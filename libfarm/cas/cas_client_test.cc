#include "libfarm/cas/cas_client.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "libfarm/cas/chunk_codec.h"
#include "libfarm/digest/digest.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/token_auth.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using farm::v1::Digest;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";
constexpr size_t kChunk = 1 << 20;

// An in-memory CasService with fault knobs: enough server to exercise the client's
// streaming, verification, retries and resumption.
class FakeCas final : public farm::v1::CasService::Service {
 public:
  grpc::Status FindMissing(grpc::ServerContext* ctx, const farm::v1::FindMissingRequest* req,
                           farm::v1::FindMissingResponse* resp) override {
    if (auto s = Gate(*ctx); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    for (const auto& d : req->digests()) {
      if (!blobs_.contains(d.hash())) *resp->add_missing() = d;
    }
    return grpc::Status::OK;
  }
  grpc::Status Upload(grpc::ServerContext* ctx, grpc::ServerReader<farm::v1::UploadRequest>* reader,
                      farm::v1::UploadResponse* resp) override {
    if (auto s = Gate(*ctx); !s.ok()) return s;
    farm::v1::UploadRequest req;
    Digest digest;
    std::string data;
    ChunkCodec codec;
    std::string plain;
    bool first = true;
    while (reader->Read(&req)) {
      if (first) digest = req.digest();
      first = false;
      if (req.compression() == farm::v1::COMPRESSION_ZSTD) {
        absl::MutexLock lock(&mu_);
        ++compressed_chunks_in_;
        EXPECT_TRUE(codec.Decompress(req.data(), kChunk, &plain).ok());
        data += plain;
      } else {
        data += req.data();
      }
    }
    if (!SameDigest(DigestOfBytes(data), digest)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "mismatch");
    }
    absl::MutexLock lock(&mu_);
    ++uploads_;
    blobs_[digest.hash()] = data;
    *resp->mutable_digest() = digest;
    return grpc::Status::OK;
  }
  grpc::Status Download(grpc::ServerContext* ctx, const farm::v1::DownloadRequest* req,
                        grpc::ServerWriter<farm::v1::DownloadResponse>* writer) override {
    if (auto s = Gate(*ctx); !s.ok()) return s;
    std::string data;
    int cut_after = -1;
    {
      absl::MutexLock lock(&mu_);
      auto it = blobs_.find(req->digest().hash());
      if (it == blobs_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no blob");
      data = it->second;
      if (corrupt_) data[data.size() / 2] ^= 1;
      offsets_.push_back(req->offset());
      cut_after = cut_after_chunks_;
      cut_after_chunks_ = -1;
    }
    ChunkCodec codec;
    int sent = 0;
    for (size_t pos = static_cast<size_t>(req->offset()); pos < data.size(); pos += kChunk) {
      if (sent++ == cut_after) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "cut");
      farm::v1::DownloadResponse resp;
      std::string chunk = data.substr(pos, kChunk);
      std::string packed;
      if (req->accept_compression() == farm::v1::COMPRESSION_ZSTD &&
          codec.Compress(chunk, &packed)) {
        resp.set_compression(farm::v1::COMPRESSION_ZSTD);
        resp.set_data(packed);
      } else {
        resp.set_data(chunk);
      }
      writer->Write(resp);
    }
    return grpc::Status::OK;
  }
  grpc::Status Stat(grpc::ServerContext* ctx, const farm::v1::StatRequest* req,
                    farm::v1::StatResponse* resp) override {
    if (auto s = Gate(*ctx); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    auto it = blobs_.find(req->digest().hash());
    resp->set_present(it != blobs_.end());
    if (it != blobs_.end()) *resp->mutable_digest() = DigestOfBytes(it->second);
    return grpc::Status::OK;
  }

  grpc::Status Gate(const grpc::ServerContext& ctx) {
    if (absl::Status s = auth_.Check(ctx, "CasService.Upload"); !s.ok()) return ToGrpcStatus(s);
    absl::MutexLock lock(&mu_);
    if (fail_next_ > 0) {
      --fail_next_;
      return grpc::Status(fail_code_, "coordinator restarting");
    }
    return grpc::Status::OK;
  }

  absl::Mutex mu_;
  TokenVerifier auth_{kToken};
  std::map<std::string, std::string> blobs_ ABSL_GUARDED_BY(mu_);
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::StatusCode fail_code_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::UNAVAILABLE;
  int cut_after_chunks_ ABSL_GUARDED_BY(mu_) = -1;
  bool corrupt_ ABSL_GUARDED_BY(mu_) = false;
  int uploads_ ABSL_GUARDED_BY(mu_) = 0;
  int compressed_chunks_in_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> offsets_ ABSL_GUARDED_BY(mu_);
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 88172645463325252ull;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return s;
}

class CasClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cas_client_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    grpc::ServerBuilder builder;
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    client_ = MakeClient(kToken, {});
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(dir_);
  }
  std::unique_ptr<CasClient> MakeClient(const std::string& token, CasClientOptions options) {
    options.initial_backoff = absl::Milliseconds(1);
    grpc::ChannelArguments args;
    return std::make_unique<CasClient>(
        farm::v1::CasService::NewStub(server_->InProcessChannel(args)), token, options);
  }
  std::string WriteFile(const std::string& name, const std::string& data) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << data;
    return p;
  }
  static std::string Slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
  FakeCas fake_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CasClient> client_;
};

TEST_F(CasClientTest, FileRoundTripAcrossChunksAndSkipsExistingBlobs) {
  const std::string data = Pattern(2 * kChunk + 5);
  bool uploaded = false;
  auto d = client_->UploadFile(WriteFile("in", data), &uploaded);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(uploaded);
  EXPECT_TRUE(SameDigest(*d, DigestOfBytes(data)));
  auto again = client_->UploadFile((dir_ / "in").string(), &uploaded);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(uploaded);
  {
    absl::MutexLock lock(&fake_.mu_);
    EXPECT_EQ(fake_.uploads_, 1);
  }
  ASSERT_TRUE(client_->DownloadToFile(*d, (dir_ / "out").string()).ok());
  EXPECT_EQ(Slurp((dir_ / "out").string()), data);
}

TEST_F(CasClientTest, EmptyBlobAndBytes) {
  auto empty = client_->UploadBytes("");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->size_bytes(), 0);
  auto got = client_->DownloadBytes(*empty, 10);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
  auto abc = client_->UploadBytes("abc");
  ASSERT_TRUE(abc.ok());
  EXPECT_EQ(*client_->DownloadBytes(*abc, 3), "abc");
  EXPECT_EQ(client_->DownloadBytes(*abc, 2).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(CasClientTest, ZstdBothWays) {
  auto client = MakeClient(kToken, {.compress = true});
  const std::string data = std::string(3 * kChunk, 'z') + Pattern(1000);
  auto d = client->UploadBytes(data);
  ASSERT_TRUE(d.ok()) << d.status();
  {
    absl::MutexLock lock(&fake_.mu_);
    EXPECT_GE(fake_.compressed_chunks_in_, 3);
  }
  auto back = client->DownloadBytes(*d, 1 << 30);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, data);
}

// Incompressible chunks are not retried one by one: after a miss the next chunks go raw
// untried, and compressible data is compressed again once the backoff has run out.
TEST(ChunkCodecTest, BacksOffOnIncompressibleChunksAndRecovers) {
  ChunkCodec codec;
  std::string noise(kChunk, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : noise) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  const std::string text(kChunk, 't');
  std::string packed;
  EXPECT_FALSE(codec.Compress(noise, &packed));  // a miss: the next chunk is not tried
  EXPECT_FALSE(codec.Compress(text, &packed));
  ASSERT_TRUE(codec.Compress(text, &packed));
  EXPECT_LT(packed.size(), text.size());
  std::string plain;
  ASSERT_TRUE(codec.Decompress(packed, kChunk, &plain).ok());
  EXPECT_EQ(plain, text);
  // Misses in a row double the untried stretch: 1, 2, 4 ...
  EXPECT_FALSE(codec.Compress(noise, &packed));  // skips 1
  EXPECT_FALSE(codec.Compress(text, &packed));
  EXPECT_FALSE(codec.Compress(noise, &packed));  // skips 2
  EXPECT_FALSE(codec.Compress(text, &packed));
  EXPECT_FALSE(codec.Compress(text, &packed));
  EXPECT_TRUE(codec.Compress(text, &packed));
}

TEST_F(CasClientTest, RetriesTransientErrors) {
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.fail_next_ = 3;
  }
  auto d = client_->UploadBytes("retry me");
  ASSERT_TRUE(d.ok()) << d.status();
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.fail_next_ = 10;
  }
  EXPECT_EQ(client_->Stat(*d).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(CasClientTest, APatientClientOutlastsMoreFailuresThanItsAttemptsUntilItsPatienceEnds) {
  auto patient = MakeClient(
      kToken,
      {.max_attempts = 2, .patience = absl::Seconds(30), .max_backoff = absl::Milliseconds(2)});
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.fail_next_ = 20;  // a coordinator away for a while
  }
  auto d = patient->UploadBytes("held by a worker");
  ASSERT_TRUE(d.ok()) << d.status();
  auto brief = MakeClient(kToken, {.max_attempts = 1000,
                                   .patience = absl::Milliseconds(50),
                                   .max_backoff = absl::Milliseconds(2)});
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.fail_next_ = 1'000'000;
  }
  EXPECT_EQ(brief->Stat(*d).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(CasClientTest, RetriesADeadlineHitAndAConflict) {
  auto d = client_->UploadBytes("retry me");
  ASSERT_TRUE(d.ok()) << d.status();
  for (grpc::StatusCode code : {grpc::StatusCode::DEADLINE_EXCEEDED, grpc::StatusCode::ABORTED}) {
    {
      absl::MutexLock lock(&fake_.mu_);
      fake_.fail_next_ = 2;
      fake_.fail_code_ = code;
    }
    EXPECT_TRUE(client_->Stat(*d).ok()) << code;
  }
}

TEST_F(CasClientTest, AFaultOnTheCoordinatorsSideIsReportedNotRetried) {
  auto d = client_->UploadBytes("fault");
  ASSERT_TRUE(d.ok()) << d.status();
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.fail_next_ = 1;
    fake_.fail_code_ = grpc::StatusCode::INTERNAL;
  }
  EXPECT_EQ(client_->Stat(*d).status().code(), absl::StatusCode::kInternal);
}

TEST_F(CasClientTest, CutDownloadResumesAtTheByteItReached) {
  const std::string data = Pattern(4 * kChunk);
  auto d = client_->UploadBytes(data);
  ASSERT_TRUE(d.ok());
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.cut_after_chunks_ = 2;
  }
  ASSERT_TRUE(client_->DownloadToFile(*d, (dir_ / "out").string()).ok());
  EXPECT_EQ(Slurp((dir_ / "out").string()), data);
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_EQ(fake_.offsets_, (std::vector<int64_t>{0, static_cast<int64_t>(2 * kChunk)}));
}

TEST_F(CasClientTest, CorruptDownloadLeavesNoFile) {
  auto d = client_->UploadBytes(Pattern(kChunk + 3));
  ASSERT_TRUE(d.ok());
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.corrupt_ = true;
  }
  const std::string out = (dir_ / "out").string();
  absl::Status s = client_->DownloadToFile(*d, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
  EXPECT_EQ(client_->DownloadBytes(*d, 1 << 30).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(CasClientTest, MissingBlobWithUnknownSizeIsNotFound) {
  auto d = ParseDigest(DigestOfBytes("never uploaded").hash());
  ASSERT_TRUE(d.ok());
  const std::string out = (dir_ / "out").string();
  EXPECT_EQ(client_->DownloadToFile(*d, out).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CasClientTest, WrongTokenIsUnauthenticatedNotRetried) {
  auto client = MakeClient("ffffffffffffffffffffffffffffffff", {});
  EXPECT_EQ(client->UploadBytes("x").status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(CasClientTest, MissingFileIsNotFound) {
  auto d = client_->UploadFile((dir_ / "nope").string());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(d.status().message().find("nope"), absl::string_view::npos);
}

}  // namespace
}  // namespace farm
