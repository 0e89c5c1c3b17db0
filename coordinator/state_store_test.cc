#include "coordinator/state_store.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <google/protobuf/wrappers.pb.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "farm/v1/cas.pb.h"
#include "farm/v1/types.pb.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("state_store_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

farm::v1::Worker MakeWorker(const std::string& name) {
  farm::v1::Worker w;
  w.set_name(name);
  w.set_state(farm::v1::WORKER_STATE_ONLINE);
  w.mutable_capabilities()->set_slots(4);
  return w;
}

TEST_F(StateStoreTest, RecordsSurviveReopen) {
  {
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "a", MakeWorker("a")).ok());
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "b", MakeWorker("b")).ok());
    ASSERT_TRUE((*store)->Delete(Table::kWorkers, "b").ok());
  }
  auto store = StateStore::Open(dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  farm::v1::Worker w;
  ASSERT_TRUE((*store)->Get(Table::kWorkers, "a", &w).ok());
  EXPECT_EQ(w.capabilities().slots(), 4u);
  EXPECT_EQ((*store)->Get(Table::kWorkers, "b", &w).code(), absl::StatusCode::kNotFound);
  // Tables are separate: the same key in another family is absent.
  EXPECT_EQ((*store)->Get(Table::kMeta, "a", &w).code(), absl::StatusCode::kNotFound);
  std::vector<std::string> keys;
  ASSERT_TRUE((*store)
                  ->ForEach(Table::kWorkers,
                            [&](const std::string& k, const std::string&) {
                              keys.push_back(k);
                              return absl::OkStatus();
                            })
                  .ok());
  EXPECT_EQ(keys, std::vector<std::string>{"a"});
}

TEST_F(StateStoreTest, EveryTableReadsThroughOneBoundedCacheHoldingItsIndexBlocks) {
  // Three tables of 12 MiB each (incompressible), more than the cache holds together.
  const std::vector<Table> tables = {Table::kActions, Table::kActionCache, Table::kCas};
  constexpr int kRecords = 3000;
  std::mt19937_64 random(7);
  {
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    for (Table table : tables) {
      for (int done = 0; done < kRecords; done += 500) {
        StateBatch batch;
        for (int i = done; i < done + 500; ++i) {
          google::protobuf::BytesValue value;
          std::string bytes(4096, '\0');
          for (char& c : bytes) c = static_cast<char>(random());
          value.set_value(std::move(bytes));
          batch.Put(table, absl::StrCat("key-", i), value);
        }
        ASSERT_TRUE((*store)->Write(batch).ok());
      }
    }
  }
  // Reopened, everything is in table files; read all of it back.
  auto store = StateStore::Open(dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  for (Table table : tables) {
    for (int i = 0; i < kRecords; ++i) {
      google::protobuf::BytesValue value;
      ASSERT_TRUE((*store)->Get(table, absl::StrCat("key-", i), &value).ok());
    }
  }
  const StateStore::MemoryUse use = (*store)->Memory();
  // One cache for every table, not one per table.
  EXPECT_EQ(use.block_cache_capacity, StateStore::kBlockCacheBytes);
  EXPECT_GT(use.block_cache, 0u);
  EXPECT_LE(use.block_cache, StateStore::kBlockCacheBytes);
  // Index and filter blocks are in the cache, not beside it in the table readers.
  EXPECT_LT(use.table_readers, 16u << 10) << use.table_readers;
}

TEST_F(StateStoreTest, ARecordThatDoesNotParseIsQuarantinedNotFatal) {
  farm::v1::Worker latin1 = MakeWorker("latin1");
  latin1.mutable_capabilities()->set_hostname("h\xf6st");  // stored before text was escaped
  const std::string latin1_bytes = latin1.SerializeAsString();
  farm::v1::Worker check;
  ASSERT_FALSE(check.ParseFromString(latin1_bytes));
  // Field 3 of a Worker is its capabilities: these bytes there say 0xffff bytes follow.
  farm::v1::UploadRequest garbage;
  garbage.set_data(std::string("\x0a\xff\xff\x03", 4));
  {
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    StateBatch batch;
    batch.Put(Table::kWorkers, "a", MakeWorker("a"));
    batch.Put(Table::kWorkers, "garbage", garbage);
    batch.Put(Table::kWorkers, "latin1", latin1);
    batch.Put(Table::kWorkers, "unusable", MakeWorker("u"));
    ASSERT_TRUE((*store)->Write(batch).ok());
  }

  std::vector<std::string> seen;
  auto visit = [&](const std::string& key, farm::v1::Worker& w) {
    seen.push_back(absl::StrCat(key, "=", w.capabilities().hostname()));
    return absl::OkStatus();
  };
  auto quarantine = [](StateStore& store) {
    std::map<std::string, std::string> kept;
    EXPECT_TRUE(store
                    .ForEach(Table::kQuarantine,
                             [&](const std::string& k, const std::string& v) {
                               kept[k] = v;
                               return absl::OkStatus();
                             })
                    .ok());
    return kept;
  };
  {
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok());
    EXPECT_EQ((*store)->QuarantinedRecords(), 0u);
    ASSERT_TRUE((*store)->ForEachRecord<farm::v1::Worker>(Table::kWorkers, visit).ok());
    EXPECT_EQ(seen, (std::vector<std::string>{"a=", "latin1=h\\xf6st", "unusable="}));
    EXPECT_EQ((*store)->QuarantinedRecords(), 2u);
    // The original bytes are kept; the Latin-1 record reads cleanly from now on.
    const auto kept = quarantine(**store);
    EXPECT_EQ(kept.at("workers/garbage"), garbage.SerializeAsString());
    EXPECT_EQ(kept.at("workers/latin1"), latin1_bytes);
    farm::v1::Worker w;
    EXPECT_EQ((*store)->Get(Table::kWorkers, "garbage", &w).code(), absl::StatusCode::kNotFound);
    ASSERT_TRUE((*store)->Get(Table::kWorkers, "latin1", &w).ok());
    EXPECT_EQ(w.capabilities().hostname(), "h\\xf6st");
    // A record a loader parses but cannot use goes the same way.
    auto moved = (*store)->Quarantine(Table::kWorkers, "unusable", "a test says so");
    ASSERT_TRUE(moved.ok()) << moved.status();
    EXPECT_EQ(*moved, "workers/unusable");
    EXPECT_EQ((*store)->Get(Table::kWorkers, "unusable", &w).code(), absl::StatusCode::kNotFound);
    // The same key again keeps both.
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "unusable", MakeWorker("u2")).ok());
    moved = (*store)->Quarantine(Table::kWorkers, "unusable", "again");
    ASSERT_TRUE(moved.ok()) << moved.status();
    EXPECT_EQ(*moved, "workers/unusable#2");
  }
  seen.clear();
  auto store = StateStore::Open(dir_.string());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->QuarantinedRecords(), 4u);
  ASSERT_TRUE((*store)->ForEachRecord<farm::v1::Worker>(Table::kWorkers, visit).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a=", "latin1=h\\xf6st"}));
  EXPECT_EQ((*store)->QuarantinedRecords(), 4u);
  // A record read on demand (the action cache, a finished action): its text escaped, not an
  // error.
  farm::v1::Worker on_demand = MakeWorker("d");
  on_demand.set_peer("\xfe");
  ASSERT_TRUE((*store)->Put(Table::kWorkers, "d", on_demand).ok());
  farm::v1::Worker w;
  ASSERT_TRUE((*store)->Get(Table::kWorkers, "d", &w).ok());
  EXPECT_EQ(w.peer(), "\\xfe");
}

TEST_F(StateStoreTest, SecondOpenOfSameDirIsRefusedAsLocked) {
  auto first = StateStore::Open(dir_.string());
  ASSERT_TRUE(first.ok());
  auto second = StateStore::Open(dir_.string());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another farm-coordinator"), std::string::npos);
}

TEST_F(StateStoreTest, CorruptStoreIsRefusedAndLeftAlone) {
  {
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put(Table::kWorkers, "a", MakeWorker("a")).ok());
  }
  // Point CURRENT at a manifest that holds garbage.
  std::string manifest;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().starts_with("MANIFEST-")) manifest = e.path().string();
  }
  ASSERT_FALSE(manifest.empty());
  { std::ofstream(manifest, std::ios::trunc) << "this is not a manifest at all, just garbage"; }
  const auto size_before = fs::file_size(manifest);
  auto store = StateStore::Open(dir_.string());
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(store.status().code() == absl::StatusCode::kDataLoss ||
              store.status().code() == absl::StatusCode::kInternal)
      << store.status();
  EXPECT_NE(store.status().message().find(dir_.string()), std::string::npos);
  EXPECT_EQ(fs::file_size(manifest), size_before);
}

TEST_F(StateStoreTest, FilesWithoutCurrentAreNotTreatedAsNewStore) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "000012.sst") << "data";
  auto store = StateStore::Open(dir_.string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(fs::exists(dir_ / "000012.sst"));
  EXPECT_FALSE(fs::exists(dir_ / "CURRENT"));
}

}  // namespace
}  // namespace farm::coordinator
