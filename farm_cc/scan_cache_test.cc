#include "farm_cc/scan_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/files/file_contents.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

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

  // The call `g++ -I<tree> -c <tree>/x.cc` in <tree>/build, FARM_CC_BASEDIR <tree>.
  std::optional<ScanCache> For(const std::string& tree) const {
    auto base = cc::BaseDir::Create(tree);
    EXPECT_TRUE(base.ok());
    CcInvocation call{.compiler = "/usr/bin/g++", .args = {"-I" + tree, "-c", tree + "/x.cc"}};
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
    inputs.bytes = cc::SerializeFileTree(inputs.tree);
    inputs.digest = cc::FileTreeDigest(inputs.tree);
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
  ASSERT_TRUE(in_a->Keep(scan, InputsOf({a + "/x.h"})).ok());

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
  ASSERT_TRUE(cache->Keep({.files = {a + "/x.h"}, .search_dirs = {}}, InputsOf({a + "/x.h"})).ok());
  EXPECT_FALSE(fs::exists(cache->path()));

  fs::create_directories(fs::path(cache->path()).parent_path());
  ASSERT_TRUE(WriteFileAtomically(cache->path(), "farm-cc scan v1\ntree abc\nbogus line\n").ok());
  EXPECT_FALSE(cache->Find().has_value());
  ASSERT_TRUE(WriteFileAtomically(cache->path(), "farm-cc scan v0\ntree abc\nfile /x\n").ok());
  EXPECT_FALSE(cache->Find().has_value());
}

}  // namespace
}  // namespace farm
