// REAPI v2's cache side of a real coordinator (coordinator/reapi/, docs/reapi.md), driven by a
// real REAPI client: BuildGrid's `bgd` 0.4.4 from the tools venv asks for the capabilities,
// uploads a file and a directory (BatchUpdateBlobs for small blobs, ByteStream Write for large
// ones) with the farm's own token (bgd's --auth-token sends it as "authorization: Bearer"),
// and downloads them back byte for byte; what it stored is the farm's CAS (`farmctl cas stat`).
// Bad input goes through gRPC from here: each is refused with a precise status and message,
// nothing is stored, and the farm serves on; the action cache's bad updates and a result whose
// output was evicted too.
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "google/bytestream/bytestream.grpc.pb.h"
#include "libfarm/auth/token.h"
#include "libfarm/digest/digest.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
namespace rev2 = ::build::bazel::remote::execution::v2;
namespace bs = ::google::bytestream;
using ::testing::HasSubstr;

constexpr char kBgd[] = FARM_TOOLS_BGD;
constexpr char kUuid[] = "3f1e2d4c-5b6a-4798-8a9b-0c1d2e3f4a5b";

// `size` bytes that differ from MiB to MiB, so no two chunks are alike.
std::string Bytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

rev2::Digest ToReapi(const farm::v1::Digest& d) {
  rev2::Digest out;
  out.set_hash(d.hash());
  out.set_size_bytes(d.size_bytes());
  return out;
}

// The digest bgd printed for `path` ("... path=[PATH] with digest=[HASH/SIZE]").
std::string PrintedDigest(const std::string& output, const std::string& path) {
  const std::regex line(absl::StrCat(
      "path=\\[", std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)"),
      "\\] with digest=\\[([0-9a-f]{64}/[0-9]+)\\]"));
  std::smatch m;
  return std::regex_search(output, m, line) ? m[1].str() : "";
}

class ReapiCasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing is skipped: without bgd the test fails, naming the fix.
    ASSERT_TRUE(fs::exists(kBgd))
        << kBgd << " is missing. Fix: bash scripts/install-test-deps.sh (installs buildgrid "
        << "0.4.4, which provides bgd, into .venv)";
    auto farm =
        TestFarm::Start(dir_.path(), FarmOptions{.coordinator_args = {"--cas-quota", "64MiB"}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    auto channel = DialCoordinator(farm_->address());
    cas_ = rev2::ContentAddressableStorage::NewStub(channel);
    bytestream_ = bs::ByteStream::NewStub(channel);
  }
  // bgd GROUP --remote FARM --auth-token TOKEN_FILE ARGS... (the admin token's when "").
  CommandResult Bgd(const std::string& group, const std::vector<std::string>& args,
                    const std::string& token_file = "") {
    std::vector<std::string> argv = {
        kBgd,           group,
        "--remote",     "http://" + farm_->address(),
        "--auth-token", token_file.empty() ? farm_->admin_token_file() : token_file};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, absl::Seconds(120), {"PYTHONDONTWRITEBYTECODE=1"});
    if (!r.ok()) return CommandResult{-1, "", std::string(r.status().message())};
    return *r;
  }
  fs::path BlobsDir() const { return dir_.path() / "data" / "cas" / "blobs"; }
  fs::path TempDirOfCas() const { return dir_.path() / "data" / "cas" / "tmp"; }
  void WriteFile(const std::string& path, const std::string& bytes) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
  }
  std::string ReadBack(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  grpc::Status Write(const std::string& name, const std::string& data, bs::WriteResponse* resp,
                     const std::string& token) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    auto writer = bytestream_->Write(&ctx, resp);
    bs::WriteRequest req;
    req.set_resource_name(name);
    req.set_data(data);
    req.set_finish_write(true);
    writer->Write(req);
    writer->WritesDone();
    return writer->Finish();
  }
  grpc::Status Read(const std::string& name, std::string* out) {
    grpc::ClientContext ctx;
    AttachToken(ctx, farm_->AdminToken());
    bs::ReadRequest req;
    req.set_resource_name(name);
    auto reader = bytestream_->Read(&ctx, req);
    bs::ReadResponse resp;
    while (reader->Read(&resp)) out->append(resp.data());
    return reader->Finish();
  }

  TempDir dir_{"reapi_cas"};
  std::unique_ptr<TestFarm> farm_;
  std::unique_ptr<rev2::ContentAddressableStorage::Stub> cas_;
  std::unique_ptr<bs::ByteStream::Stub> bytestream_;
};

TEST_F(ReapiCasTest, BgdSeesACacheOnlySha256EndpointAtApi2_0) {
  CommandResult r = Bgd("capabilities", {});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  nlohmann::json caps = nlohmann::json::parse(r.stdout_text, nullptr, false);
  ASSERT_FALSE(caps.is_discarded()) << r.stdout_text;
  EXPECT_FALSE(caps.contains("executionCapabilities"));
  nlohmann::json& cache = caps["cacheCapabilities"];
  EXPECT_EQ(cache["digestFunctions"], nlohmann::json::array({"SHA256"})) << r.stdout_text;
  // int64 fields are strings in proto3 JSON.
  EXPECT_EQ(cache["maxBatchTotalSizeBytes"], "3145728") << r.stdout_text;
  // update_enabled is the truth for the token: the admin token may write the action cache.
  EXPECT_TRUE(cache.value(
      nlohmann::json::json_pointer("/actionCacheUpdateCapabilities/updateEnabled"), false));
  // A read token may not (proto3 JSON leaves a false field out).
  auto reader = farm_->CreateToken("read", "caps-reader");
  ASSERT_TRUE(reader.ok()) << reader.status();
  CommandResult as_reader = Bgd("capabilities", {}, reader->file);
  ASSERT_EQ(as_reader.exit_code, 0) << Output(as_reader);
  nlohmann::json reader_caps = nlohmann::json::parse(as_reader.stdout_text, nullptr, false);
  ASSERT_FALSE(reader_caps.is_discarded()) << as_reader.stdout_text;
  EXPECT_FALSE(reader_caps["cacheCapabilities"].value(
      nlohmann::json::json_pointer("/actionCacheUpdateCapabilities/updateEnabled"), false))
      << as_reader.stdout_text;
  EXPECT_EQ(caps["lowApiVersion"]["major"], 2);
  EXPECT_EQ(caps["highApiVersion"]["major"], 2);
  EXPECT_FALSE(caps["highApiVersion"].contains("minor")) << "high_api_version must be 2.0";
}

TEST_F(ReapiCasTest, BgdUploadsAndDownloadsFilesAndADirectoryByteForByte) {
  // A small file goes through BatchUpdateBlobs, a 6 MiB one through ByteStream.
  const std::string small = dir_ / "small.txt";
  const std::string large = dir_ / "large.bin";
  WriteFile(small, "hello from a REAPI client\n");
  WriteFile(large, Bytes(6 << 20, 1));
  CommandResult up = Bgd("cas", {"upload-file", "--verify", small, large});
  ASSERT_EQ(up.exit_code, 0) << Output(up);
  const std::string small_digest = PrintedDigest(up.stdout_text, small);
  const std::string large_digest = PrintedDigest(up.stdout_text, large);
  ASSERT_FALSE(small_digest.empty()) << Output(up);
  ASSERT_FALSE(large_digest.empty()) << Output(up);
  EXPECT_EQ(large_digest, DigestToString(DigestOfBytes(ReadBack(large))));

  // One store: the farm's own CAS holds what bgd uploaded.
  CommandResult stat = farm_->Farmctl({"cas", "stat", large_digest});
  EXPECT_EQ(stat.exit_code, 0) << Output(stat);
  EXPECT_THAT(stat.stdout_text, HasSubstr("6.0 MiB"));

  CommandResult down = Bgd("cas", {"download-file", "--verify", small_digest, dir_ / "small.out",
                                   large_digest, dir_ / "large.out"});
  ASSERT_EQ(down.exit_code, 0) << Output(down);
  EXPECT_THAT(down.stderr_text, ::testing::Not(HasSubstr("Error")));
  EXPECT_EQ(ReadBack(dir_ / "small.out"), ReadBack(small));
  EXPECT_TRUE(ReadBack(dir_ / "large.out") == ReadBack(large));

  // A directory: Directory messages and files, one of them large, an empty one, a subdirectory.
  const std::string tree = dir_ / "tree";
  WriteFile(tree + "/a.txt", "alpha\n");
  WriteFile(tree + "/empty", "");
  WriteFile(tree + "/sub/b.bin", Bytes(5 << 20, 2));
  WriteFile(tree + "/sub/deeper/c.txt", "gamma\n");
  CommandResult up_dir = Bgd("cas", {"upload-dir", "--verify", tree});
  ASSERT_EQ(up_dir.exit_code, 0) << Output(up_dir);
  const std::string root = PrintedDigest(up_dir.stdout_text, tree);
  ASSERT_FALSE(root.empty()) << Output(up_dir);
  // bgd asks GetTree for the tree's Directory messages, then reads the files.
  CommandResult down_dir = Bgd("cas", {"download-dir", "--verify", root, dir_ / "tree.out"});
  ASSERT_EQ(down_dir.exit_code, 0) << Output(down_dir);
  EXPECT_THAT(down_dir.stdout_text, HasSubstr("Success: Pulled"));
  EXPECT_THAT(down_dir.stderr_text, ::testing::Not(HasSubstr("Error")));
  for (const char* file : {"a.txt", "empty", "sub/b.bin", "sub/deeper/c.txt"}) {
    const std::string got = dir_ / absl::StrCat("tree.out/", file);
    ASSERT_TRUE(fs::exists(got)) << file << "\n" << Output(down_dir);
    EXPECT_TRUE(ReadBack(got) == ReadBack(tree + "/" + file)) << file;
  }
  // bgd went through every path: batches for small blobs, ByteStream for large ones, GetTree
  // for the directory (bgd 0.4.4 uploads without asking FindMissingBlobs first).
  const std::string metrics = farm_->Metrics();
  for (const char* method : {"BatchUpdateBlobs", "BatchReadBlobs", "Write", "Read"}) {
    EXPECT_THAT(metrics, HasSubstr(absl::StrCat("farm_rpc_requests_total{code=\"OK\",method=\"",
                                                method, "\"}")))
        << method;
  }
}

TEST_F(ReapiCasTest, ATokenWithoutTheWriteRoleReadsButUploadsNothing) {
  auto reader = farm_->CreateToken("read", "reapi-reader");
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto reader_token = ReadTokenFile(reader->file);
  ASSERT_TRUE(reader_token.ok()) << reader_token.status();
  const std::string file = dir_ / "f.txt";
  WriteFile(file, "not for readers");
  CommandResult up = Bgd("cas", {"upload-file", file}, reader->file);
  EXPECT_NE(up.exit_code, 0) << Output(up);
  EXPECT_THAT(Output(up),
              HasSubstr("a 'read' token may not call ContentAddressableStorage.BatchUpdateBlobs"));
  EXPECT_EQ(FilesUnder(BlobsDir()), 0u);

  // Through gRPC: the precise refusal.
  grpc::ClientContext ctx;
  AttachToken(ctx, *reader_token);
  rev2::BatchUpdateBlobsRequest req;
  auto* blob = req.add_requests();
  *blob->mutable_digest()->mutable_hash() = DigestOfBytes("x").hash();
  blob->mutable_digest()->set_size_bytes(1);
  blob->set_data("x");
  rev2::BatchUpdateBlobsResponse resp;
  grpc::Status s = cas_->BatchUpdateBlobs(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("a 'read' token may not call ContentAddressableStorage.BatchUpdateBlobs "
                        "(roles that may: admin, submit, worker, build)"));
  bs::WriteResponse wresp;
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/", DigestOfBytes("x").hash(), "/1"), "x",
            &wresp, *reader_token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("may not call ByteStream.Write"));
  EXPECT_EQ(FilesUnder(BlobsDir()), 0u);

  // Reading is the reader's: what the admin uploads, the reader downloads.
  CommandResult admin_up = Bgd("cas", {"upload-file", file});
  ASSERT_EQ(admin_up.exit_code, 0) << Output(admin_up);
  const std::string digest = PrintedDigest(admin_up.stdout_text, file);
  CommandResult down = Bgd("cas", {"download-file", digest, dir_ / "f.out"}, reader->file);
  ASSERT_EQ(down.exit_code, 0) << Output(down);
  EXPECT_EQ(ReadBack(dir_ / "f.out"), "not for readers");
}

TEST_F(ReapiCasTest, BadInputIsRefusedPreciselyStoresNothingAndLeavesTheFarmServing) {
  const std::string token = farm_->AdminToken();
  const farm::v1::Digest claimed = DigestOfBytes("what the client says it sends");
  const std::string sent = "what the client really sends";

  // A digest that does not match its blob: per blob in a batch, for the call in ByteStream.
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::BatchUpdateBlobsRequest req;
    auto* blob = req.add_requests();
    blob->mutable_digest()->set_hash(claimed.hash());
    blob->mutable_digest()->set_size_bytes(static_cast<int64_t>(sent.size()));
    blob->set_data(sent);
    rev2::BatchUpdateBlobsResponse resp;
    ASSERT_TRUE(cas_->BatchUpdateBlobs(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.responses_size(), 1);
    EXPECT_EQ(resp.responses(0).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(resp.responses(0).status().message(),
                HasSubstr("upload rejected, nothing was stored"));
    EXPECT_THAT(resp.responses(0).status().message(),
                HasSubstr(DigestToString(DigestOfBytes(sent))));
  }
  bs::WriteResponse wresp;
  farm::v1::Digest same_size = claimed;
  same_size.set_size_bytes(static_cast<int64_t>(sent.size()));
  grpc::Status s = Write(
      absl::StrCat("uploads/", kUuid, "/blobs/", same_size.hash(), "/", same_size.size_bytes()),
      sent, &wresp, token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("upload rejected, nothing was stored"));
  EXPECT_THAT(s.error_message(), HasSubstr(DigestToString(DigestOfBytes(sent))));

  // '..' in a ByteStream name, to Write and to Read.
  const farm::v1::Digest d = DigestOfBytes("abc");
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/../../", d.hash(), "/3"), "abc", &wresp, token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("malformed ByteStream resource name"));
  EXPECT_THAT(s.error_message(), HasSubstr("contains a '..' segment"));
  std::string out;
  s = Read(absl::StrCat("../blobs/", d.hash(), "/3"), &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("contains a '..' segment"));

  // An unknown digest function: as a ByteStream segment and as a request's field.
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/blake3/", d.hash(), "/3"), "abc", &wresp,
            token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(
      s.error_message(),
      HasSubstr("names digest function 'blake3': this farm's CAS stores SHA256 digests only"));
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::FindMissingBlobsRequest req;
    req.set_digest_function(rev2::DigestFunction::SHA512);
    rev2::FindMissingBlobsResponse resp;
    s = cas_->FindMissingBlobs(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("digest function SHA512 is not supported"));
  }

  // A blob over the farm's size limit (the CAS quota, 64 MiB here): refused before any byte.
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/", d.hash(), "/", int64_t{1} << 30), "abc",
            &wresp, token);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("larger than the whole CAS quota (64.0 MiB)"));

  EXPECT_EQ(FilesUnder(BlobsDir()), 0u);
  EXPECT_EQ(FilesUnder(TempDirOfCas()), 0u);

  // The farm is unharmed: a good upload through REAPI and the farm's own CLI both work.
  s = Write(absl::StrCat("uploads/", kUuid, "/blobs/", d.hash(), "/3"), "abc", &wresp, token);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(wresp.committed_size(), 3);
  out.clear();
  ASSERT_TRUE(Read(absl::StrCat("blobs/", d.hash(), "/3"), &out).ok());
  EXPECT_EQ(out, "abc");
  CommandResult stat = farm_->Farmctl({"cas", "stat", DigestToString(d)});
  EXPECT_EQ(stat.exit_code, 0) << Output(stat);
  {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::FindMissingBlobsRequest req;
    for (const farm::v1::Digest& asked : {d, DigestOfBytes(""), same_size}) {
      req.add_blob_digests()->set_hash(asked.hash());
      req.mutable_blob_digests()->rbegin()->set_size_bytes(asked.size_bytes());
    }
    rev2::FindMissingBlobsResponse resp;
    ASSERT_TRUE(cas_->FindMissingBlobs(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.missing_blob_digests_size(), 1);
    EXPECT_EQ(resp.missing_blob_digests(0).hash(), same_size.hash());
  }
  EXPECT_EQ(FilesUnder(BlobsDir()), 1u);
}

// The action cache of a real coordinator, through gRPC: each bad update is refused with its
// status and stores nothing; a stored result whose output the CAS evicted is NOT_FOUND.
TEST_F(ReapiCasTest, ActionCacheRefusesBadResultsAndForgetsOnesWhoseBlobsWereEvicted) {
  auto ac = rev2::ActionCache::NewStub(DialCoordinator(farm_->address()));
  auto update = [&](const std::string& action, const rev2::ActionResult& result,
                    const std::string& token) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    rev2::UpdateActionResultRequest req;
    *req.mutable_action_digest() = ToReapi(DigestOfBytes(action));
    *req.mutable_action_result() = result;
    rev2::ActionResult stored;
    return ac->UpdateActionResult(&ctx, req, &stored);
  };
  auto get = [&](const std::string& action) {
    grpc::ClientContext ctx;
    AttachToken(ctx, farm_->AdminToken());
    rev2::GetActionResultRequest req;
    *req.mutable_action_digest() = ToReapi(DigestOfBytes(action));
    rev2::ActionResult result;
    return ac->GetActionResult(&ctx, req, &result);
  };
  // 40 MiB outputs: two do not fit the farm's 64 MiB quota together.
  auto upload = [&](const std::string& bytes) {
    const farm::v1::Digest d = DigestOfBytes(bytes);
    grpc::ClientContext ctx;
    AttachToken(ctx, farm_->AdminToken());
    bs::WriteResponse resp;
    auto writer = bytestream_->Write(&ctx, &resp);
    for (size_t at = 0; at < bytes.size(); at += 1 << 20) {
      bs::WriteRequest req;
      if (at == 0) {
        req.set_resource_name(
            absl::StrCat("uploads/", kUuid, "/blobs/", d.hash(), "/", d.size_bytes()));
      }
      req.set_write_offset(static_cast<int64_t>(at));
      req.set_data(bytes.substr(at, 1 << 20));
      req.set_finish_write(at + (1 << 20) >= bytes.size());
      writer->Write(req);
    }
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return ToReapi(d);
  };
  rev2::ActionResult result;
  auto* out = result.add_output_files();
  out->set_path("bin/tool");
  const std::string first = Bytes(40 << 20, 1);
  *out->mutable_digest() = ToReapi(DigestOfBytes(first));

  // An output the CAS lacks.
  grpc::Status s = update("action", result, farm_->AdminToken());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("output file 'bin/tool'"));
  upload(first);
  // A path that leaves the working directory.
  out->set_path("bin/../../tool");
  s = update("action", result, farm_->AdminToken());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("'bin/../../tool'"));
  out->set_path("bin/tool");
  // A read token, and a submit token on a farm that grants no writers.
  for (const char* role : {"read", "submit"}) {
    auto created = farm_->CreateToken(role, absl::StrCat("ac-", role));
    ASSERT_TRUE(created.ok()) << created.status();
    auto token = ReadTokenFile(created->file);
    ASSERT_TRUE(token.ok()) << token.status();
    s = update("action", result, *token);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << role;
    EXPECT_THAT(s.error_message(), HasSubstr(absl::StrCat("a '", role,
                                                          "' token may not call "
                                                          "ActionCache.UpdateActionResult")));
  }
  EXPECT_EQ(get("action").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(farm_->Metrics(),
              ::testing::Not(HasSubstr("farm_reapi_action_cache_updates_total 1")));

  // Stored, served, then its output evicted by another: no longer served.
  ASSERT_TRUE(update("action", result, farm_->AdminToken()).ok());
  ASSERT_TRUE(get("action").ok());
  upload(Bytes(40 << 20, 2));
  s = get("action");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("is not in the CAS"));
  EXPECT_THAT(farm_->Metrics(),
              HasSubstr("farm_reapi_action_cache_lookups_total{result=\"incomplete\"} 1"));
}

}  // namespace
}  // namespace farm::testing
