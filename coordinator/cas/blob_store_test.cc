#include "coordinator/cas/blob_store.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "libfarm/digest/digest.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

class BlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blob_store_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Reopen(1000);
  }
  void TearDown() override {
    blobs_.reset();
    state_.reset();
    fs::remove_all(dir_);
  }
  void Reopen(uint64_t quota) {
    blobs_.reset();
    state_.reset();
    auto state = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(state.ok()) << state.status();
    state_ = std::move(*state);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), state_.get(), quota, [this] {
      clock_ += absl::Seconds(1);
      return clock_;
    });
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
  }
  farm::v1::Digest Put(const std::string& data) {
    auto d = blobs_->PutBytes(data);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : farm::v1::Digest();
  }
  int TempFiles() {
    return static_cast<int>(
        std::distance(fs::directory_iterator(dir_ / "cas" / "tmp"), fs::directory_iterator()));
  }

  fs::path dir_;
  absl::Time clock_ = absl::FromUnixSeconds(1700000000);
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BlobStore> blobs_;
};

TEST_F(BlobStoreTest, PutThenReadBackSurvivesRestart) {
  const farm::v1::Digest d = Put("hello");
  EXPECT_TRUE(blobs_->Contains(d));
  auto path = blobs_->PathOf(d);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(fs::path(*path).filename(), d.hash());
  EXPECT_EQ(fs::path(*path).parent_path().filename(), d.hash().substr(0, 2));
  Reopen(1000);
  EXPECT_TRUE(blobs_->Contains(d));
  EXPECT_EQ(blobs_->bytes_stored(), 5u);
  auto stat = blobs_->Stat(d);
  EXPECT_TRUE(stat.present());
  EXPECT_GT(stat.stored_at().seconds(), 0);
  farm::v1::Digest any = d;
  any.set_size_bytes(-1);
  EXPECT_TRUE(blobs_->Contains(any));
  farm::v1::Digest wrong_size = d;
  wrong_size.set_size_bytes(6);
  EXPECT_FALSE(blobs_->Contains(wrong_size));
}

TEST_F(BlobStoreTest, MismatchIsRejectedNamingBothDigestsAndKeepsNothing) {
  auto w = blobs_->BeginWrite(5);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Append("hellO").ok());
  const farm::v1::Digest claimed = DigestOfBytes("hello");
  auto r = blobs_->Commit(std::move(*w), claimed);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(DigestToString(claimed)), absl::string_view::npos);
  EXPECT_NE(r.status().message().find(DigestToString(DigestOfBytes("hellO"))),
            absl::string_view::npos);
  EXPECT_FALSE(blobs_->Contains(claimed));
  EXPECT_EQ(blobs_->blob_count(), 0u);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(BlobStoreTest, ExistingBlobIsANoOp) {
  const farm::v1::Digest d = Put("same");
  const auto stored_at = blobs_->Stat(d).stored_at().seconds();
  EXPECT_TRUE(blobs_->PutBytes("same").ok());
  EXPECT_EQ(blobs_->blob_count(), 1u);
  EXPECT_EQ(blobs_->Stat(d).stored_at().seconds(), stored_at);
  EXPECT_EQ(TempFiles(), 0);
}

TEST_F(BlobStoreTest, LruEvictionNeverEvictsPinnedBlobs) {
  const farm::v1::Digest a = Put(std::string(400, 'a'));
  const farm::v1::Digest b = Put(std::string(400, 'b'));
  blobs_->Pin("build-1", {a});
  EXPECT_EQ(blobs_->Stat(a).pins(), 1u);
  // a is older but pinned: b goes.
  const farm::v1::Digest c = Put(std::string(400, 'c'));
  EXPECT_TRUE(blobs_->Contains(a));
  EXPECT_FALSE(blobs_->Contains(b));
  EXPECT_TRUE(blobs_->Contains(c));
  EXPECT_EQ(blobs_->evictions(), 1u);
  EXPECT_LE(blobs_->bytes_stored(), 1000u);
  // Everything left is pinned: a blob that doesn't fit is refused, nothing is evicted.
  blobs_->Pin("build-2", {c});
  auto d = blobs_->PutBytes(std::string(400, 'd'));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(d.status().message().find("--cas-quota"), absl::string_view::npos);
  EXPECT_TRUE(blobs_->Contains(a));
  EXPECT_TRUE(blobs_->Contains(c));
  EXPECT_EQ(TempFiles(), 0);
  // Unpinned, the least recently used goes first: touch a, so c is older.
  blobs_->Unpin("build-1");
  blobs_->Unpin("build-2");
  ASSERT_TRUE(blobs_->PathOf(a).ok());
  EXPECT_TRUE(blobs_->PutBytes(std::string(400, 'd')).ok());
  EXPECT_TRUE(blobs_->Contains(a));
  EXPECT_FALSE(blobs_->Contains(c));
  // Evicted blobs stay gone after a restart; records and files agree.
  Reopen(1000);
  EXPECT_FALSE(blobs_->Contains(c));
  EXPECT_EQ(blobs_->blob_count(), 2u);
}

TEST_F(BlobStoreTest, BlobLargerThanQuotaIsRefusedUpFront) {
  EXPECT_EQ(blobs_->BeginWrite(1001).status().code(), absl::StatusCode::kResourceExhausted);
}

// A 2 GiB chunked upload (no declared size) used to fill cas/tmp under a 200 MiB quota.
TEST_F(BlobStoreTest, TempFilesOfWritesInFlightCountAgainstTheQuota) {
  auto unsized = blobs_->BeginWrite(-1);
  ASSERT_TRUE(unsized.ok()) << unsized.status();
  ASSERT_TRUE(unsized->Append(std::string(600, 'a')).ok());
  auto second = blobs_->BeginWrite(500);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(second->Append(std::string(300, 'b')).ok());
  // 900 of 1000 bytes in flight: the next 200 would exceed the quota and write nothing.
  const absl::Status refused = second->Append(std::string(200, 'b'));
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find("--cas-quota"), std::string::npos) << refused;
  EXPECT_EQ(fs::file_size(second->temp_path()), 300u);
  // Ending a write gives its space back and removes its partial file.
  const std::string partial = unsized->temp_path();
  { auto gone = std::move(*unsized); }
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_TRUE(second->Append(std::string(200, 'b')).ok());
  auto stored = blobs_->Commit(std::move(*second),
                               DigestOfBytes(std::string(300, 'b') + std::string(200, 'b')));
  ASSERT_TRUE(stored.ok()) << stored.status();
  // Committed bytes count in the store, no longer in the temp space.
  auto third = blobs_->BeginWrite(500);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->Append(std::string(500, 'c')).ok());
  EXPECT_EQ(TempFiles(), 1);
}

TEST_F(BlobStoreTest, PinsAreCountedPerOwner) {
  const farm::v1::Digest a = Put("x");
  blobs_->Pin("one", {a});
  blobs_->Pin("two", {a});
  EXPECT_EQ(blobs_->Stat(a).pins(), 2u);
  blobs_->Unpin("one");
  EXPECT_EQ(blobs_->Stat(a).pins(), 1u);
  blobs_->Unpin("one");
  EXPECT_EQ(blobs_->Stat(a).pins(), 1u);
  blobs_->Unpin("two");
  EXPECT_EQ(blobs_->Stat(a).pins(), 0u);
}

TEST_F(BlobStoreTest, PutFileConsumesTheFile) {
  const std::string p = (dir_ / "log.txt").string();
  std::ofstream(p) << "build log";
  auto d = blobs_->PutFile(p);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(SameDigest(*d, DigestOfBytes("build log")));
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(blobs_->PutFile(p).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(BlobStoreTest, RestartDropsLeftoversAndUnrecordedFiles) {
  const farm::v1::Digest keep = Put("keep");
  // A temp file from a crashed upload, and a blob renamed into place but never recorded.
  std::ofstream(dir_ / "cas" / "tmp" / ".farm-blob-crash") << "partial";
  const farm::v1::Digest ghost = DigestOfBytes("ghost");
  fs::create_directories(dir_ / "cas" / "blobs" / ghost.hash().substr(0, 2));
  std::ofstream(dir_ / "cas" / "blobs" / ghost.hash().substr(0, 2) / ghost.hash()) << "ghost";
  // A recorded blob whose file vanished.
  const farm::v1::Digest lost = Put("lost");
  fs::remove(*blobs_->PathOf(lost));
  Reopen(1000);
  EXPECT_TRUE(blobs_->Contains(keep));
  EXPECT_FALSE(blobs_->Contains(ghost));
  EXPECT_FALSE(blobs_->Contains(lost));
  EXPECT_FALSE(fs::exists(dir_ / "cas" / "blobs" / ghost.hash().substr(0, 2) / ghost.hash()));
  EXPECT_EQ(TempFiles(), 0);
  EXPECT_EQ(blobs_->bytes_stored(), 4u);
}

}  // namespace
}  // namespace farm::coordinator
