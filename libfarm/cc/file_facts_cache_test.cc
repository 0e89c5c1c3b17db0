#include "libfarm/cc/file_facts_cache.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "libfarm/digest/digest.h"
#include "libfarm/files/file_contents.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kLimit = 1 << 20;

class FileFactsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "/farm-facts-XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    root_ = dir;
    store_ = root_ + "/facts/store";
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `name` and returns its stat(); `now` is then two seconds and more after its change.
  struct stat Write(const std::string& name, const std::string& text) {
    EXPECT_TRUE(WriteFileAtomically(root_ + "/" + name, text).ok());
    struct stat info {};
    EXPECT_EQ(stat((root_ + "/" + name).c_str(), &info), 0);
    const int64_t changed = int64_t{info.st_ctim.tv_sec} * 1'000'000'000 + info.st_ctim.tv_nsec;
    now_ = std::max<int64_t>(now_, changed + 2'500'000'000);
    return info;
  }
  FileFacts FactsOf(const std::string& text, std::vector<IncludedName> names) {
    FileFacts facts;
    facts.digest = DigestOfBytes(text);
    facts.names = std::move(names);
    return facts;
  }

  std::string root_;
  std::string store_;
  int64_t now_ = 0;
};

TEST_F(FileFactsCacheTest, KeptFactsAnswerForTheSameUnchangedFileOnly) {
  const struct stat a = Write("a.h", "#include <b.h>\n");
  {
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    FileFacts facts = FactsOf("#include <b.h>\n", {{"b.h", false}, {"c.h", true}});
    facts.mentions_time_macros = true;
    facts.unread_include = true;
    cache.Remember(root_ + "/a.h", a, facts, now_);
    EXPECT_EQ(cache.kept(), 1);
    ASSERT_TRUE(cache.Save().ok());
  }
  FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
  const FileFacts* found = cache.Find(root_ + "/a.h", a);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->digest.hash(), DigestOfBytes("#include <b.h>\n").hash());
  EXPECT_EQ(found->digest.size_bytes(), 15);
  EXPECT_FALSE(found->elf);
  EXPECT_TRUE(found->mentions_time_macros);
  EXPECT_TRUE(found->unread_include);
  ASSERT_EQ(found->names.size(), 2u);
  EXPECT_EQ(found->names[0].name, "b.h");
  EXPECT_FALSE(found->names[0].probe);
  EXPECT_EQ(found->names[1].name, "c.h");
  EXPECT_TRUE(found->names[1].probe);
  EXPECT_EQ(cache.hits(), 1);

  // Any part of the identity changed, or another path: not these facts.
  for (auto change : std::vector<void (*)(struct stat&)>{
           [](struct stat& s) { s.st_size += 1; }, [](struct stat& s) { s.st_mtim.tv_nsec += 1; },
           [](struct stat& s) { s.st_ctim.tv_sec += 1; }, [](struct stat& s) { s.st_ino += 1; },
           [](struct stat& s) { s.st_dev += 1; }}) {
    struct stat other = a;
    change(other);
    EXPECT_EQ(cache.Find(root_ + "/a.h", other), nullptr);
  }
  EXPECT_EQ(cache.Find(root_ + "/b.h", a), nullptr);
}

TEST_F(FileFactsCacheTest, AFileChangedWithinTwoSecondsIsNotKept) {
  const struct stat a = Write("a.h", "x");
  FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
  const int64_t changed = a.st_ctim.tv_sec * 1'000'000'000LL + a.st_ctim.tv_nsec;
  cache.Remember(root_ + "/a.h", a, FactsOf("x", {}), changed + 1'500'000'000LL);
  EXPECT_EQ(cache.kept(), 0);
  ASSERT_TRUE(cache.Save().ok());
  EXPECT_FALSE(fs::exists(store_));  // nothing to keep, nothing written
  EXPECT_EQ(cache.Find(root_ + "/a.h", a), nullptr);
}

TEST_F(FileFactsCacheTest, ADamagedOrTornBatchIsDroppedAndTheStoreRewritten) {
  const struct stat a = Write("a.h", "a");
  const struct stat b = Write("b.h", "b");
  const struct stat c = Write("c.h", "c");
  for (const auto& [name, info] : {std::pair{"a.h", a}, std::pair{"b.h", b}}) {
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    cache.Remember(root_ + "/" + name, info, FactsOf(name, {}), now_);
    ASSERT_TRUE(cache.Save().ok());  // one batch each
  }
  const uintmax_t two_batches = fs::file_size(store_);
  {
    // One byte of b.h's batch flipped: that batch goes, a.h's stays.
    std::fstream store(store_, std::ios::in | std::ios::out | std::ios::binary);
    store.seekp(static_cast<std::streamoff>(two_batches - 3));
    store.put('!');
  }
  {
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    EXPECT_NE(cache.Find(root_ + "/a.h", a), nullptr);
    EXPECT_EQ(cache.Find(root_ + "/b.h", b), nullptr);
    cache.Remember(root_ + "/c.h", c, FactsOf("c", {}), now_);
    ASSERT_TRUE(cache.Save().ok());  // rewritten, not appended after the damage
  }
  {
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    EXPECT_NE(cache.Find(root_ + "/a.h", a), nullptr);
    EXPECT_NE(cache.Find(root_ + "/c.h", c), nullptr);
    EXPECT_LT(fs::file_size(store_), two_batches);
  }
  // A batch cut short (a write that died part way): dropped, the rest read.
  fs::resize_file(store_, fs::file_size(store_) - 1);
  FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
  EXPECT_EQ(cache.Find(root_ + "/a.h", a), nullptr);
  EXPECT_EQ(cache.Find(root_ + "/c.h", c), nullptr);
}

TEST_F(FileFactsCacheTest, AKeptDigestThatIsNoDigestIsNeverGivenOut) {
  const struct stat a = Write("a.h", "a");
  const struct stat b = Write("b.h", "b");
  {
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    cache.Remember(root_ + "/a.h", a, FactsOf("a", {}), now_);
    ASSERT_TRUE(cache.Save().ok());
  }
  {
    // A batch whose checksum holds but whose digest is not hex (nor UTF-8).
    FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
    FileFacts forged = FactsOf("b", {});
    forged.digest.set_hash(std::string(64, '\xff'));
    cache.Remember(root_ + "/b.h", b, forged, now_);
    ASSERT_TRUE(cache.Save().ok());
  }
  FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
  EXPECT_NE(cache.Find(root_ + "/a.h", a), nullptr);
  EXPECT_EQ(cache.Find(root_ + "/b.h", b), nullptr);
}

TEST_F(FileFactsCacheTest, AStorePastItsLimitIsRewrittenToHalfOfIt) {
  constexpr uint64_t kSmall = 4096;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "h" + std::to_string(i) + ".h";
    const struct stat info = Write(name, name);
    FileFactsCache cache = FileFactsCache::Load(store_, kSmall);
    cache.Remember(root_ + "/" + name, info, FactsOf(name, {{std::string(40, 'n'), false}}), now_);
    ASSERT_TRUE(cache.Save().ok());
    EXPECT_LE(fs::file_size(store_), kSmall) << "after " << name;
  }
  // The newest file's facts are among those kept.
  struct stat last {};
  ASSERT_EQ(stat((root_ + "/h39.h").c_str(), &last), 0);
  FileFactsCache cache = FileFactsCache::Load(store_, kSmall);
  EXPECT_NE(cache.Find(root_ + "/h39.h", last), nullptr);
}

TEST_F(FileFactsCacheTest, AStoreThatCannotBeWrittenSaysWhere) {
  ASSERT_TRUE(WriteFileAtomically(root_ + "/facts", "a file where the directory goes").ok());
  const struct stat a = Write("a.h", "a");
  FileFactsCache cache = FileFactsCache::Load(store_, kLimit);
  cache.Remember(root_ + "/a.h", a, FactsOf("a", {}), now_);
  const absl::Status saved = cache.Save();
  EXPECT_FALSE(saved.ok());
  EXPECT_NE(saved.message().find(store_), std::string::npos) << saved;
}

}  // namespace
}  // namespace farm::cc
