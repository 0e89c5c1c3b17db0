#include "worker/blob_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/file_tree/subtrees.h"
#include "worker/file_tree_image.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// Serves a fixed set of blobs, slowly, and counts downloads.
class SlowCas final : public farm::v1::CasService::Service {
 public:
  grpc::Status Download(grpc::ServerContext*, const farm::v1::DownloadRequest* req,
                        grpc::ServerWriter<farm::v1::DownloadResponse>* writer) override {
    {
      absl::MutexLock lock(&mu);
      max_in_flight = std::max(max_in_flight, ++in_flight);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    absl::MutexLock lock(&mu);
    --in_flight;
    ++downloads;
    auto it = blobs.find(req->digest().hash());
    if (it == blobs.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such blob");
    farm::v1::DownloadResponse resp;
    resp.set_data(it->second.substr(static_cast<size_t>(req->offset())));
    writer->Write(resp);
    return grpc::Status::OK;
  }
  farm::v1::Digest Add(const std::string& data) {
    absl::MutexLock lock(&mu);
    blobs[DigestOfBytes(data).hash()] = data;
    return DigestOfBytes(data);
  }
  absl::Mutex mu;
  std::map<std::string, std::string> blobs ABSL_GUARDED_BY(mu);
  int downloads ABSL_GUARDED_BY(mu) = 0;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  int max_in_flight ABSL_GUARDED_BY(mu) = 0;
};

class BlobCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blob_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    grpc::ServerBuilder builder;
    builder.RegisterService(&cas_);
    server_ = builder.BuildAndStart();
    client_ = std::make_unique<CasClient>(
        farm::v1::CasService::NewStub(server_->InProcessChannel({})), "token");
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(dir_);
  }
  int Downloads() {
    absl::MutexLock lock(&cas_.mu);
    return cas_.downloads;
  }
  static std::string Slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
  SlowCas cas_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CasClient> client_;
};

TEST_F(BlobCacheTest, ConcurrentFetchesOfOneDigestDownloadOnce) {
  const farm::v1::Digest d = cas_.Add("shared input");
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<std::string>> paths(8, absl::UnknownError(""));
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { paths[i] = cache.Fetch(d); });
  }
  for (auto& t : threads) t.join();
  for (const auto& p : paths) {
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(Slurp(*p), "shared input");
  }
  EXPECT_EQ(Downloads(), 1);
  ASSERT_TRUE(cache.Fetch(d).ok());
  EXPECT_EQ(Downloads(), 1);
}

// A tree's first layout fetches its missing blobs side by side, each once; what was already
// cached is not fetched again, and the copies then come from the cache.
TEST_F(BlobCacheTest, PrefetchDownloadsTheMissingBlobsSideBySideOnce) {
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  std::vector<farm::v1::Digest> digests;
  for (int i = 0; i < 6; ++i) digests.push_back(cas_.Add("header " + std::to_string(i)));
  ASSERT_TRUE(cache.Fetch(digests[0]).ok());
  digests.push_back(digests[1]);  // a tree names one blob at two paths
  cache.Prefetch(digests, 4);
  {
    absl::MutexLock lock(&cas_.mu);
    EXPECT_EQ(cas_.downloads, 6);
    EXPECT_GT(cas_.max_in_flight, 1);
    EXPECT_LE(cas_.max_in_flight, 4);
  }
  for (size_t i = 0; i < 6; ++i) {
    const std::string dest = (dir_ / ("in" + std::to_string(i))).string();
    ASSERT_TRUE(cache.MaterializeAt(digests[i], dest, false).ok());
    EXPECT_EQ(Slurp(dest), "header " + std::to_string(i));
  }
  EXPECT_EQ(Downloads(), 6);
}

TEST_F(BlobCacheTest, EvictsLeastRecentlyUsedBeyondTheLimit) {
  const farm::v1::Digest a = cas_.Add(std::string(40, 'a'));
  const farm::v1::Digest b = cas_.Add(std::string(40, 'b'));
  const farm::v1::Digest c = cas_.Add(std::string(40, 'c'));
  BlobCache cache((dir_ / "cache").string(), 100, client_.get());
  ASSERT_TRUE(cache.Fetch(a).ok());
  ASSERT_TRUE(cache.Fetch(b).ok());
  ASSERT_TRUE(cache.Fetch(a).ok());  // a is now more recent than b
  ASSERT_TRUE(cache.Fetch(c).ok());  // 120 > 100: b goes
  EXPECT_EQ(cache.bytes_cached(), 80u);
  EXPECT_EQ(Downloads(), 3);
  ASSERT_TRUE(cache.Fetch(a).ok());
  EXPECT_EQ(Downloads(), 3);
  ASSERT_TRUE(cache.Fetch(b).ok());
  EXPECT_EQ(Downloads(), 4);
}

TEST_F(BlobCacheTest, SurvivesRestartAndDropsLeftovers) {
  const farm::v1::Digest a = cas_.Add("kept across restarts");
  {
    BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
    ASSERT_TRUE(cache.Fetch(a).ok());
  }
  std::ofstream(dir_ / "cache" / ".farm-blob-half") << "partial";
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  EXPECT_EQ(cache.bytes_cached(), 20u);
  EXPECT_FALSE(fs::exists(dir_ / "cache" / ".farm-blob-half"));
  ASSERT_TRUE(cache.Fetch(a).ok());
  EXPECT_EQ(Downloads(), 1);
}

TEST_F(BlobCacheTest, MaterializeCopiesReadOnlyOrExecutable) {
  const farm::v1::Digest d = cas_.Add("#!/bin/sh\necho hi\n");
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  const std::string plain = (dir_ / "scratch" / "a" / "input.txt").string();
  const std::string tool = (dir_ / "scratch" / "bin" / "tool").string();
  ASSERT_TRUE(cache.MaterializeAt(d, plain, false).ok());
  ASSERT_TRUE(cache.MaterializeAt(d, tool, true).ok());
  EXPECT_EQ(Slurp(plain), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(Slurp(tool), "#!/bin/sh\necho hi\n");
  struct stat sp {
  }, st{}, sc{};
  ASSERT_EQ(::stat(plain.c_str(), &sp), 0);
  ASSERT_EQ(::stat(tool.c_str(), &st), 0);
  ASSERT_EQ(::stat(cache.Fetch(d)->c_str(), &sc), 0);
  // Copies: whatever an action does to its input stays in its scratch dir.
  EXPECT_NE(sp.st_ino, sc.st_ino);
  EXPECT_EQ(sp.st_mode & 0777, 0444u);
  EXPECT_NE(st.st_ino, sc.st_ino);
  EXPECT_EQ(st.st_mode & 0777, 0555u);
  EXPECT_EQ(Downloads(), 1);
}

// The probe's attack: `chmod u+w in.txt; echo POISON >> in.txt` on a hard-linked input
// changed the cached blob for every later action. Writing the input changes only the copy;
// and a cached file changed behind the cache's back is dropped and fetched again.
TEST_F(BlobCacheTest, PoisonedInputOrCacheNeverReachesTheNextAction) {
  const farm::v1::Digest d = cas_.Add("clean bytes\n");
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  const std::string first = (dir_ / "a" / "in.txt").string();
  ASSERT_TRUE(cache.MaterializeAt(d, first, false).ok());
  fs::permissions(first, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(first, std::ios::app) << "POISON\n";
  const std::string second = (dir_ / "b" / "in.txt").string();
  ASSERT_TRUE(cache.MaterializeAt(d, second, false).ok());
  EXPECT_EQ(Slurp(second), "clean bytes\n");
  EXPECT_EQ(Downloads(), 1);

  const std::string cached = *cache.Fetch(d);
  fs::permissions(cached, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(cached, std::ios::app) << "POISON\n";
  const std::string third = (dir_ / "c" / "in.txt").string();
  ASSERT_TRUE(cache.MaterializeAt(d, third, false).ok());
  EXPECT_EQ(Slurp(third), "clean bytes\n");
  EXPECT_EQ(Downloads(), 2);  // fetched again
  EXPECT_EQ(Slurp(*cache.Fetch(d)), "clean bytes\n");
  EXPECT_EQ(cache.bytes_cached(), 12u);
}

// A layout's read-only inputs: one verified copy per bytes, mtime and mode, linked wherever
// they are wanted; counted in the cache's bytes and dropped all at once past half of them.
TEST_F(BlobCacheTest, LinkAtSharesOneReadOnlyCopyPerBytesMtimeAndMode) {
  const farm::v1::Digest d = cas_.Add(std::string(100, 'h'));
  BlobCache cache((dir_ / "cache").string(), 350, client_.get());
  auto inode = [](const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return std::make_tuple(st.st_ino, st.st_mode & 0777, static_cast<int64_t>(st.st_mtime));
  };
  ASSERT_TRUE(cache.LinkAt(d, (dir_ / "a" / "x.h").string(), false, 1000).ok());
  ASSERT_TRUE(cache.LinkAt(d, (dir_ / "b" / "x.h").string(), false, 1000).ok());
  ASSERT_TRUE(cache.LinkAt(d, (dir_ / "c" / "x.h").string(), false, 2000).ok());
  ASSERT_TRUE(cache.LinkAt(d, (dir_ / "c" / "tool").string(), true, 1000).ok());
  const auto [a_ino, a_mode, a_mtime] = inode(dir_ / "a" / "x.h");
  EXPECT_EQ(inode(dir_ / "b" / "x.h"), inode(dir_ / "a" / "x.h"));
  EXPECT_EQ(a_mode, 0444u);
  EXPECT_EQ(a_mtime, 1000);
  const auto [c_ino, c_mode, c_mtime] = inode(dir_ / "c" / "x.h");
  EXPECT_NE(c_ino, a_ino);
  EXPECT_EQ(c_mtime, 2000);
  const auto [t_ino, t_mode, t_mtime] = inode(dir_ / "c" / "tool");
  EXPECT_NE(t_ino, a_ino);
  EXPECT_EQ(t_mode, 0555u);
  EXPECT_EQ(Slurp((dir_ / "c" / "tool").string()), std::string(100, 'h'));
  EXPECT_EQ(Downloads(), 1);
  // The fourth copy made 400 bytes, over 350, the copies over half of it: they all went (the
  // links made keep their bytes), and the tool's was made again for its link.
  EXPECT_EQ(cache.bytes_cached(), 200u);
  EXPECT_EQ(Slurp((dir_ / "a" / "x.h").string()), std::string(100, 'h'));
  ASSERT_TRUE(cache.LinkAt(d, (dir_ / "d" / "x.h").string(), false, 1000).ok());
  EXPECT_NE(std::get<0>(inode(dir_ / "d" / "x.h")), a_ino);
  EXPECT_EQ(cache.bytes_cached(), 300u);
  EXPECT_EQ(Downloads(), 1);
}

TEST_F(BlobCacheTest, MissingBlobIsNotFoundAndLeavesNothing) {
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  auto p = cache.Fetch(DigestOfBytes("not on the coordinator"));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(cache.bytes_cached(), 0u);
  farm::v1::Digest evil;
  evil.set_hash("../../etc/passwd");
  EXPECT_EQ(cache.Fetch(evil).status().code(), absl::StatusCode::kInvalidArgument);
}

// A compile's input tree sent as directories by digest: read through the cache, each blob
// downloaded once, and a cached blob changed on disk is never taken for the tree.
TEST_F(BlobCacheTest, ATreeSentAsDirectoriesIsReadThroughTheCacheOnce) {
  farm::v1::FileTree flat;
  for (const char* path : {"usr/include/a.h", "usr/include/bits/b.h", "src/c.cc"}) {
    farm::v1::InputFile* f = flat.add_files();
    f->set_path(path);
    *f->mutable_digest() = DigestOfBytes(path);
  }
  const SplitFileTree split = SplitIntoSubtrees(flat);
  cas_.Add(split.root_bytes);
  for (const auto& [digest, bytes] : split.subtrees) cas_.Add(bytes);
  BlobCache cache((dir_ / "cache").string(), 1 << 20, client_.get());
  auto read = ReadFileTree(split.root, &cache);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(SerializeFileTree(*read), SerializeFileTree(flat));
  auto downloads = [this] {
    absl::MutexLock lock(&cas_.mu);
    return cas_.downloads;
  };
  EXPECT_EQ(downloads(), 1 + static_cast<int>(split.subtrees.size()));
  ASSERT_TRUE(ReadFileTree(split.root, &cache).ok());
  EXPECT_EQ(downloads(), 1 + static_cast<int>(split.subtrees.size()));

  auto path = cache.Fetch(split.root);
  ASSERT_TRUE(path.ok());
  fs::permissions(*path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(*path, std::ios::trunc) << "changed behind the cache's back";
  auto changed = ReadFileTree(split.root, &cache);
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(changed.status().message().find("no longer matches its digest"), std::string::npos)
      << changed.status();
}

}  // namespace
}  // namespace farm::worker
