// The CAS through real processes: a 1 GiB blob goes up with `farmctl cas put` and comes back
// with `farmctl cas get` byte-identical while neither the coordinator nor farmctl ever holds
// more than a sliver of it in memory; lying or unauthenticated uploads store nothing.
#include <signal.h>

#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "farm/v1/cas.grpc.pb.h"
#include "libfarm/auth/token.h"
#include "libfarm/digest/digest.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/exit_code.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;
// "Far below the blob size": a 1 GiB blob may cost each process at most this much memory.
constexpr uint64_t kRssCeiling = 200 * kMiB;

// A file of `mib` MiB whose every MiB differs (a random block stamped with its index), so
// no two chunks are alike, written quickly.
void WriteLargeFile(const std::string& path, int mib) {
  std::string block(kMiB, '\0');
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < block.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(block.data() + i, &v, 8);
  }
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < mib; ++i) {
    std::memcpy(block.data(), &i, sizeof(i));
    std::memcpy(block.data() + kMiB / 2, &i, sizeof(i));
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
}

bool SameContents(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::string ba(kMiB, '\0'), bb(kMiB, '\0');
  while (true) {
    fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
    fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
    if (fa.gcount() != fb.gcount()) return false;
    if (fa.gcount() == 0) return true;
    if (std::memcmp(ba.data(), bb.data(), static_cast<size_t>(fa.gcount())) != 0) return false;
  }
}

// Peak resident set of a live process (VmHWM), in bytes; 0 if unreadable.
uint64_t PeakRss(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    uint64_t kib = 0;
    std::string number = line.substr(6);
    number.erase(number.find("kB"));
    if (absl::SimpleAtoi(number, &kib)) return kib * 1024;
  }
  return 0;
}

class CasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(), {.coordinator_args = {"--cas-quota", "4GiB"}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    token_ = farm_->AdminToken();
    ASSERT_FALSE(token_.empty());
    stub_ = farm::v1::CasService::NewStub(DialCoordinator(farm_->address()));
  }
  CommandResult Farmctl(const std::vector<std::string>& args, const std::string& token_file = "") {
    return farm_->Farmctl(args, {}, absl::Seconds(120), token_file);
  }
  grpc::Status RawUpload(const farm::v1::Digest& claimed, const std::string& data,
                         farm::v1::UploadResponse* resp, bool with_token = true) {
    grpc::ClientContext ctx;
    if (with_token) AttachToken(ctx, token_);
    auto writer = stub_->Upload(&ctx, resp);
    farm::v1::UploadRequest req;
    *req.mutable_digest() = claimed;
    req.set_data(data);
    writer->Write(req);
    writer->WritesDone();
    return writer->Finish();
  }
  fs::path BlobsDir() const { return dir_.path() / "data" / "cas" / "blobs"; }

  TempDir dir_{"cas"};
  std::unique_ptr<TestFarm> farm_;
  std::string token_;
  std::unique_ptr<farm::v1::CasService::Stub> stub_;
};

TEST_F(CasTest, OneGibBlobRoundTripsWithBoundedMemory) {
  const std::string in = dir_ / "big.bin";
  const std::string out = dir_ / "big.out";
  WriteLargeFile(in, 1024);
  const uint64_t coordinator_rss_before = PeakRss(farm_->coordinator().process().pid());

  const absl::Time put_start = absl::Now();
  CommandResult put = Farmctl({"--json", "cas", "put", in});
  const absl::Duration put_took = absl::Now() - put_start;
  ASSERT_EQ(put.exit_code, 0) << put.stderr_text;
  auto put_json = nlohmann::json::parse(put.stdout_text);
  const std::string digest = put_json["digest"];
  EXPECT_EQ(put_json["size_bytes"], 1024 * kMiB);
  EXPECT_TRUE(put_json["uploaded"]);

  const absl::Time get_start = absl::Now();
  CommandResult get = Farmctl({"cas", "get", digest, "-o", out});
  const absl::Duration get_took = absl::Now() - get_start;
  ASSERT_EQ(get.exit_code, 0) << get.stderr_text;
  EXPECT_TRUE(SameContents(in, out));

  const uint64_t coordinator_rss = PeakRss(farm_->coordinator().process().pid());
  std::cout << "1 GiB: put " << absl::FormatDuration(put_took) << " (farmctl peak RSS "
            << put.peak_rss_bytes / kMiB << " MiB), get " << absl::FormatDuration(get_took)
            << " (farmctl peak RSS " << get.peak_rss_bytes / kMiB << " MiB); coordinator peak RSS "
            << coordinator_rss_before / kMiB << " -> " << coordinator_rss / kMiB << " MiB"
            << std::endl;
  EXPECT_GT(put.peak_rss_bytes, 0u);
  EXPECT_LT(put.peak_rss_bytes, kRssCeiling);
  EXPECT_LT(get.peak_rss_bytes, kRssCeiling);
  EXPECT_GT(coordinator_rss, 0u);
  EXPECT_LT(coordinator_rss, kRssCeiling);

  // Stored under its hash, and a second put sends nothing.
  CommandResult again = Farmctl({"--json", "cas", "put", in});
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_FALSE(nlohmann::json::parse(again.stdout_text)["uploaded"]);
  CommandResult stat = Farmctl({"cas", "stat", digest});
  EXPECT_EQ(stat.exit_code, 0);
  EXPECT_THAT(stat.stdout_text, HasSubstr("1.0 GiB"));
}

TEST_F(CasTest, CorruptUploadIsRejectedAndNothingIsStored) {
  const farm::v1::Digest claimed = DigestOfBytes("what the client says it sends");
  farm::v1::UploadResponse resp;
  grpc::Status s = RawUpload(claimed, "what the client really sends", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("expected " + DigestToString(claimed)));
  EXPECT_THAT(s.error_message(),
              HasSubstr(DigestToString(DigestOfBytes("what the client really sends"))));
  EXPECT_EQ(FilesUnder(BlobsDir()), 0u);
  EXPECT_EQ(FilesUnder(dir_.path() / "data" / "cas" / "tmp"), 0u);
  CommandResult stat = Farmctl({"cas", "stat", DigestToString(claimed)});
  EXPECT_EQ(stat.exit_code, kExitConfig);
  EXPECT_THAT(stat.stderr_text, HasSubstr("not in the CAS"));
}

TEST_F(CasTest, ReuploadOfAnExistingBlobIsANoOp) {
  const std::string data = "stored once";
  const farm::v1::Digest d = DigestOfBytes(data);
  farm::v1::UploadResponse resp;
  ASSERT_TRUE(RawUpload(d, data, &resp).ok());
  EXPECT_FALSE(resp.already_present());
  const auto stored = fs::last_write_time(BlobsDir() / d.hash().substr(0, 2) / d.hash());
  ASSERT_TRUE(RawUpload(d, data, &resp).ok());
  EXPECT_TRUE(resp.already_present());
  EXPECT_EQ(fs::last_write_time(BlobsDir() / d.hash().substr(0, 2) / d.hash()), stored);
  EXPECT_EQ(FilesUnder(BlobsDir()), 1u);
}

TEST_F(CasTest, MissingOrWrongTokenIsUnauthenticated) {
  const farm::v1::Digest d = DigestOfBytes("no token");
  farm::v1::UploadResponse resp;
  EXPECT_EQ(RawUpload(d, "no token", &resp, false).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  grpc::ClientContext ctx;
  farm::v1::StatRequest req;
  *req.mutable_digest() = d;
  farm::v1::StatResponse stat;
  EXPECT_EQ(stub_->Stat(&ctx, req, &stat).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(FilesUnder(BlobsDir()), 0u);

  std::ofstream(dir_ / "wrong-token") << "ffffffffffffffffffffffffffffffff\n";
  std::ofstream(dir_ / "f.txt") << "x";
  CommandResult put = Farmctl({"cas", "put", dir_ / "f.txt"}, dir_ / "wrong-token");
  EXPECT_EQ(put.exit_code, kExitUnauthenticated);
  EXPECT_THAT(put.stderr_text, HasSubstr("token does not match"));
}

TEST_F(CasTest, OperatorMistakesGetClearMessages) {
  CommandResult bad = Farmctl({"cas", "get", "not-a-digest", "-o", dir_ / "x"});
  EXPECT_EQ(bad.exit_code, kExitConfig);
  EXPECT_THAT(bad.stderr_text, HasSubstr("HASH/SIZE"));
  CommandResult missing_file = Farmctl({"cas", "put", dir_ / "nope"});
  EXPECT_EQ(missing_file.exit_code, kExitConfig);
  EXPECT_THAT(missing_file.stderr_text, HasSubstr("nope"));
  CommandResult missing_blob =
      Farmctl({"cas", "get", DigestOfBytes("never stored").hash(), "-o", dir_ / "x"});
  EXPECT_EQ(missing_blob.exit_code, kExitConfig);
  EXPECT_THAT(missing_blob.stderr_text, HasSubstr("not in the CAS"));
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

}  // namespace
}  // namespace farm::testing
