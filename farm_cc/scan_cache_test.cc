#include "farm_cc/scan_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/file_contents.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

constexpr uint64_t kBound = uint64_t{1} << 30;

class ScanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scan_cache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    for (const char* tree : {"a", "tree-b"}) {
      fs::create_directories(dir_ / tree / "build");
      ASSERT_TRUE(WriteFileAtomically((dir_ / tree / "x.h").string(), "int x;\n").ok());
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Tree(const char* name) const { return (dir_ / name).string(); }
  std::string CacheDir() const { return (dir_ / "cache").string(); }

  // The call `g++ -I<tree> [extra] -c <tree>/x.cc` in <tree>/build, FARM_CC_BASEDIR <tree>.
  std::optional<ScanCache> For(const std::string& tree, const std::string& extra = "-O2") const {
    auto base = cc::BaseDir::Create(tree);
    EXPECT_TRUE(base.ok());
    CcInvocation call{.compiler = "/usr/bin/g++",
                      .args = {"-I" + tree, extra, "-c", tree + "/x.cc"}};
    farm::v1::Digest toolchain;
    toolchain.set_hash(std::string(64, 'a'));
    return ScanCache::ForCall(CacheDir(), *base, toolchain, call, {{"PATH", "/usr/bin"}},
                              tree + "/build");
  }

  // The inputs a scan of `files` gathers, as far as the cache looks at them: the tree.
  static CompileInputs InputsOf(const std::vector<std::string>& files) {
    cc::FileTreeBuilder builder;
    for (const std::string& f : files) EXPECT_TRUE(builder.Add(f, "/").ok()) << f;
    CompileInputs inputs;
    inputs.tree = builder.Tree();
    inputs.bytes = SerializeFileTree(inputs.tree);
    inputs.digest = FileTreeDigest(inputs.tree);
    return inputs;
  }

  fs::path dir_;
};

TEST_F(ScanCacheTest, AnotherCheckoutFindsTheScanWithItsOwnPaths) {
  const std::string a = Tree("a"), b = Tree("tree-b");
  auto in_a = For(a);
  ASSERT_TRUE(in_a.has_value());
  EXPECT_FALSE(in_a->Find().has_value());
  cc::DependencyScan scan{.files = {a + "/x.h", "/usr/include/stdio.h"},
                          .search_dirs = {a, "/usr/include"}};
  ASSERT_TRUE(in_a->Keep(scan, InputsOf({a + "/x.h"}), kBound).ok());

  auto in_b = For(b);
  ASSERT_TRUE(in_b.has_value());
  EXPECT_EQ(in_b->path(), in_a->path());  // one key for both checkouts
  auto kept = in_b->Find();
  ASSERT_TRUE(kept.has_value());
  EXPECT_THAT(kept->scan.files, ElementsAre(b + "/x.h", "/usr/include/stdio.h"));
  EXPECT_THAT(kept->scan.search_dirs, ElementsAre(b, "/usr/include"));
  EXPECT_TRUE(in_b->Holds(*kept, InputsOf({b + "/x.h"})));

  // The same file with other bytes is another tree.
  ASSERT_TRUE(WriteFileAtomically(b + "/x.h", "int x, y;\n").ok());
  EXPECT_FALSE(in_b->Holds(*kept, InputsOf({b + "/x.h"})));
}

TEST_F(ScanCacheTest, NoSearchListNothingKeptAndAMangledEntryIsAMiss) {
  const std::string a = Tree("a");
  auto cache = For(a);
  ASSERT_TRUE(cache.has_value());
  // A translated -v: the search list is unknown, so no new header could be noticed.
  ASSERT_TRUE(
      cache->Keep({.files = {a + "/x.h"}, .search_dirs = {}}, InputsOf({a + "/x.h"}), kBound).ok());
  EXPECT_FALSE(fs::exists(cache->path()));

  fs::create_directories(fs::path(cache->path()).parent_path());
  ASSERT_TRUE(WriteFileAtomically(cache->path(), "farm-cc scan v1\ntree abc\nbogus line\n").ok());
  EXPECT_FALSE(cache->Find().has_value());
  ASSERT_TRUE(WriteFileAtomically(cache->path(), "farm-cc scan v0\ntree abc\nfile /x\n").ok());
  EXPECT_FALSE(cache->Find().has_value());
}

// The bound holds without a walk over the whole cache: keeping an entry prunes its own
// directory (one of 256) to its share, and an entry found since stays.
TEST_F(ScanCacheTest, KeepingPrunesTheLeastRecentlyUsedBeyondTheBound) {
  const std::string a = Tree("a");
  const cc::DependencyScan scan{.files = {a + "/x.h"}, .search_dirs = {a}};
  const CompileInputs inputs = InputsOf({a + "/x.h"});
  auto first = For(a, "-DCALL=first");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->Keep(scan, inputs, kBound).ok());
  const uint64_t entry_bytes = fs::file_size(first->path());
  // Room for 8 entries per directory: some 2,000 in all.
  const uint64_t bound = 256 * (8 * entry_bytes + entry_bytes / 2);
  constexpr int kCalls = 5000;
  std::optional<ScanCache> last;
  for (int i = 0; i < kCalls; ++i) {
    last = For(a, "-DCALL=" + std::to_string(i));
    ASSERT_TRUE(last.has_value());
    ASSERT_TRUE(last->Keep(scan, inputs, bound).ok());
    if (i % 10 == 0) {
      ASSERT_TRUE(first->Find().has_value()) << "after " << i << " calls";
    }
  }
  uint64_t total = 0;
  int entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(CacheDir())) {
    if (e.is_regular_file()) {
      total += e.file_size();
      ++entries;
    }
  }
  EXPECT_LE(total, bound);
  EXPECT_LT(entries, kCalls / 2);
  EXPECT_TRUE(last->Find().has_value());   // the newest
  EXPECT_TRUE(first->Find().has_value());  // found again and again: recently used
}

}  // namespace
}  // namespace farm
