// Fault injection under the state store, as RocksDB tests itself: a file system that fails a
// sync or runs out of space on command, and a crash image whose write-ahead log ends in a torn
// record. Each leaves the store consistent: acknowledged records are there, a transition
// (one StateBatch) is there whole or not at all, and the error says what happened.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include "absl/strings/match.h"
#include "coordinator/state_store.h"
#include "farm/v1/types.pb.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// What the faulty file system does to writes of the write-ahead log (*.log) when armed.
struct Faults {
  std::atomic<bool> fail_sync{false};
  std::atomic<bool> no_space{false};
};

class FaultyWal : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultyWal(std::unique_ptr<rocksdb::FSWritableFile> file, Faults* faults)
      : FSWritableFileOwnerWrapper(std::move(file)), faults_(faults) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    if (faults_->no_space) return rocksdb::IOStatus::NoSpace("injected: no space left on device");
    return FSWritableFileOwnerWrapper::Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (faults_->no_space) return rocksdb::IOStatus::NoSpace("injected: no space left on device");
    return FSWritableFileOwnerWrapper::Append(data, options, info, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
    if (faults_->fail_sync) return rocksdb::IOStatus::IOError("injected: fsync failed");
    return FSWritableFileOwnerWrapper::Sync(options, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    if (faults_->fail_sync) return rocksdb::IOStatus::IOError("injected: fsync failed");
    return FSWritableFileOwnerWrapper::Fsync(options, dbg);
  }

 private:
  Faults* faults_;
};

class FaultyFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultyFileSystem(Faults* faults)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), faults_(faults) {}
  const char* Name() const override { return "FaultyFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = FileSystemWrapper::NewWritableFile(name, options, file, dbg);
    if (s.ok() && absl::EndsWith(name, ".log")) {
      *file = std::make_unique<FaultyWal>(std::move(*file), faults_);
    }
    return s;
  }

 private:
  Faults* faults_;
};

farm::v1::Worker MakeWorker(const std::string& name) {
  farm::v1::Worker w;
  w.set_name(name);
  w.mutable_capabilities()->set_slots(2);
  return w;
}

class StateStoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("state_store_fault_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::remove_all(Crash());
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove_all(Crash());
  }
  std::string Crash() const { return dir_.string() + ".crash"; }

  // The transition every case writes: two records in two tables, one batch.
  static StateBatch Transition() {
    StateBatch batch;
    batch.Put(Table::kWorkers, "b", MakeWorker("b"));
    batch.Put(Table::kBuilds, "c", MakeWorker("c"));
    return batch;
  }
  // Opens `dir` on the ordinary file system: "a" is there, "b" and "c" both or neither.
  static bool ConsistentAfterReopen(const std::string& dir, bool* transition_kept) {
    auto store = StateStore::Open(dir);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return false;
    farm::v1::Worker w;
    EXPECT_TRUE((*store)->Get(Table::kWorkers, "a", &w).ok()) << "an acknowledged record is gone";
    const bool b = (*store)->Get(Table::kWorkers, "b", &w).ok();
    const bool c = (*store)->Get(Table::kBuilds, "c", &w).ok();
    EXPECT_EQ(b, c) << "half a transition survived";
    *transition_kept = b;
    return b == c;
  }

  Faults faults_;
  std::unique_ptr<rocksdb::Env> env_ =
      rocksdb::NewCompositeEnv(std::make_shared<FaultyFileSystem>(&faults_));
  fs::path dir_;
};

TEST_F(StateStoreFaultTest, AFailingSyncFailsTheWriteAndLosesNothingAcknowledged) {
  {
    auto store = StateStore::Open(dir_.string(), env_.get());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "a", MakeWorker("a")).ok());
    faults_.fail_sync = true;
    absl::Status s = (*store)->Write(Transition());
    ASSERT_FALSE(s.ok()) << "a write whose sync failed was acknowledged";
    EXPECT_THAT(s.message(), HasSubstr("fsync failed"));
    // RocksDB stops taking writes after a failed sync: nothing later is acknowledged either.
    faults_.fail_sync = false;
    EXPECT_FALSE((*store)->Put(Table::kWorkers, "d", MakeWorker("d")).ok());
  }
  bool kept = false;
  EXPECT_TRUE(ConsistentAfterReopen(dir_.string(), &kept));
}

TEST_F(StateStoreFaultTest, NoSpaceOnAWriteIsDiskFullAndTheStoreStaysWhole) {
  {
    auto store = StateStore::Open(dir_.string(), env_.get());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "a", MakeWorker("a")).ok());
    faults_.no_space = true;
    absl::Status s = (*store)->Write(Transition());
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr("disk full: free space on the filesystem of"));
    EXPECT_THAT(s.message(), HasSubstr("Fix:"));
    faults_.no_space = false;
  }
  bool kept = true;
  EXPECT_TRUE(ConsistentAfterReopen(dir_.string(), &kept));
  EXPECT_FALSE(kept) << "a write refused for want of space was kept";
}

TEST_F(StateStoreFaultTest, ACrashThatTearsTheLastRecordDropsTheWholeTransition) {
  auto store = StateStore::Open(dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put(Table::kWorkers, "a", MakeWorker("a")).ok());
  ASSERT_TRUE((*store)->Write(Transition()).ok());
  // The disk as kill -9 leaves it (the store still open), with the log's last record torn.
  fs::copy(dir_, Crash(), fs::copy_options::recursive);
  fs::path wal;
  for (const auto& e : fs::directory_iterator(Crash())) {
    if (e.path().extension() == ".log" && (wal.empty() || e.path() > wal)) wal = e.path();
  }
  ASSERT_FALSE(wal.empty());
  fs::resize_file(wal, fs::file_size(wal) - 5);
  bool kept = true;
  EXPECT_TRUE(ConsistentAfterReopen(Crash(), &kept));
  EXPECT_FALSE(kept);
  // The same image untorn keeps it: the test sees the difference it claims.
  fs::remove_all(Crash());
  fs::copy(dir_, Crash(), fs::copy_options::recursive);
  EXPECT_TRUE(ConsistentAfterReopen(Crash(), &kept));
  EXPECT_TRUE(kept);
}

}  // namespace
}  // namespace farm::coordinator
