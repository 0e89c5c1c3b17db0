#include "libfarm/cc/file_tree_builder.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/cc/include_probes.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/file_contents.h"

namespace farm::cc {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FileTreeBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = ::testing::TempDir() + "/farm-cc-tree-XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    root_ = fs::canonical(dir).string();
    rel_ = root_.substr(1);  // tree paths have no leading '/'
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& path, const std::string& text, bool executable = false) {
    fs::create_directories(fs::path(root_ + "/" + path).parent_path());
    ASSERT_TRUE(WriteFileAtomically(root_ + "/" + path, text, executable ? 0755 : 0644).ok());
  }
  void Link(const std::string& target, const std::string& path) {
    fs::create_directories(fs::path(root_ + "/" + path).parent_path());
    fs::create_symlink(target, root_ + "/" + path);
  }
  // "path -> target" for links, "path digest-size x" for files, relative to root_.
  std::vector<std::string> Shown(const FileTreeBuilder& builder) {
    std::vector<std::string> shown;
    const farm::v1::FileTree tree = builder.Tree();
    for (const farm::v1::InputFile& entry : tree.files()) {
      if (entry.path().rfind(rel_ + "/", 0) != 0) {
        shown.push_back("outside: " + entry.path());
        continue;
      }
      std::string path = entry.path().substr(rel_.size() + 1);
      if (!entry.symlink_target().empty()) {
        EXPECT_TRUE(entry.digest().hash().empty());
        shown.push_back(path + " -> " + entry.symlink_target());
      } else {
        shown.push_back(path + " " + std::to_string(entry.digest().size_bytes()) +
                        (entry.executable() ? " x" : ""));
      }
    }
    return shown;
  }

  std::string root_;
  std::string rel_;
};

TEST_F(FileTreeBuilderTest, FilesAndLinksAtTheirPaths) {
  Write("real/dir/a.h", "int a;\n");
  Write("bin/tool-12", "#!x\n", /*executable=*/true);
  Link("tool-12", "bin/tool");
  Link("real/dir", "alias");            // a linked directory
  Link(root_ + "/real", "abs");         // an absolute target
  Link("../real/dir/a.h", "bin/up.h");  // '..' in a target
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add(root_ + "/bin/tool", "/").ok());
  ASSERT_TRUE(builder.Add("alias/a.h", root_).ok());
  ASSERT_TRUE(builder.Add("abs/dir/./a.h", root_).ok());
  ASSERT_TRUE(builder.Add("bin/up.h", root_).ok());
  ASSERT_TRUE(builder.Add("bin/up.h", root_).ok());  // twice is fine
  EXPECT_THAT(Shown(builder),
              ElementsAre("abs -> " + root_ + "/real", "alias -> real/dir", "bin/tool -> tool-12",
                          "bin/tool-12 4 x", "bin/up.h -> ../real/dir/a.h", "real/dir/a.h 7"));
  farm::v1::FileTree tree = builder.Tree();
  EXPECT_EQ(tree.files(5).digest().hash(), DigestOfBytes("int a;\n").hash());
  auto uploads = builder.FilesToUpload();
  ASSERT_EQ(uploads.size(), 2u);
  EXPECT_EQ(uploads[0].first, root_ + "/bin/tool-12");
  EXPECT_EQ(uploads[1].first, root_ + "/real/dir/a.h");
}

TEST_F(FileTreeBuilderTest, DotDotAfterALinkLeavesItsTarget) {
  // The kernel resolves "alias/../b.h" as real/dir/../b.h = real/b.h, not ./b.h.
  Write("real/dir/a.h", "a");
  Write("real/b.h", "bb");
  Write("b.h", "wrong");
  Link("real/dir", "alias");
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add("alias/../b.h", root_).ok());
  EXPECT_THAT(Shown(builder), ElementsAre("alias -> real/dir", "real/b.h 2"));
}

TEST_F(FileTreeBuilderTest, NoEntryBelowALink) {
  Write("usr/lib/x/libc.so", "elf");
  Link("usr/lib", "lib");
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add(root_ + "/lib/x/libc.so", "/").ok());
  ASSERT_TRUE(builder.Add(root_ + "/usr/lib/x/libc.so", "/").ok());
  EXPECT_THAT(Shown(builder), ElementsAre("lib -> usr/lib", "usr/lib/x/libc.so 3"));
  farm::v1::FileTree tree = builder.Tree();
  for (const auto& link : tree.files()) {
    if (link.symlink_target().empty()) continue;
    for (const auto& other : tree.files()) {
      EXPECT_NE(other.path().rfind(link.path() + "/", 0), 0u) << other.path();
    }
  }
}

TEST_F(FileTreeBuilderTest, Errors) {
  Write("f.h", "x");
  fs::create_directories(root_ + "/d");
  Link("loop2", "loop1");
  Link("loop1", "loop2");
  Link("missing", "dangling");
  FileTreeBuilder builder;
  absl::Status missing = builder.Add("nope.h", root_);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("nope.h"));
  EXPECT_EQ(builder.Add("dangling", root_).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(builder.Add("d", root_).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(builder.Add("f.h/x", root_).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(builder.Add("/dev/null", "/").code(), absl::StatusCode::kFailedPrecondition);
  absl::Status loop = builder.Add("loop1", root_);
  EXPECT_EQ(loop.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(loop.message(), HasSubstr("symbolic links"));
  EXPECT_EQ(builder.Add("rel.h", "").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FileTreeBuilderTest, TimeMacrosAndEmptyDirectories) {
  Write("a.h", "int x;\n");
  Write("t.h", "const char* when = __DATE__;\n");
  fs::create_directories(root_ + "/empty");
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add("a.h", root_).ok());
  EXPECT_FALSE(builder.mentions_time_macros());
  ASSERT_TRUE(builder.Add("empty/../t.h", root_).ok());
  EXPECT_TRUE(builder.mentions_time_macros());
  EXPECT_THAT(builder.DirectoriesWithoutEntries(), ElementsAre(root_ + "/empty"));
  Write("empty/e.h", "");
  ASSERT_TRUE(builder.Add("empty/e.h", root_).ok());
  EXPECT_THAT(builder.DirectoriesWithoutEntries(), IsEmpty());
}

TEST_F(FileTreeBuilderTest, SerializationIsCanonical) {
  Write("a.h", "a");
  Write("b.h", "b");
  FileTreeBuilder one, two;
  ASSERT_TRUE(one.Add("a.h", root_).ok());
  ASSERT_TRUE(one.Add("b.h", root_).ok());
  ASSERT_TRUE(two.Add("b.h", root_).ok());
  ASSERT_TRUE(two.Add("a.h", root_).ok());
  EXPECT_EQ(SerializeFileTree(one.Tree()), SerializeFileTree(two.Tree()));
  farm::v1::FileTree reversed = one.Tree();
  std::swap(*reversed.mutable_files(0), *reversed.mutable_files(1));
  EXPECT_TRUE(SameDigest(FileTreeDigest(reversed), FileTreeDigest(one.Tree())));
  farm::v1::FileTree parsed;
  ASSERT_TRUE(parsed.ParseFromString(SerializeFileTree(one.Tree())));
  EXPECT_EQ(parsed.files_size(), 2);
  Write("c.h", "c");
  ASSERT_TRUE(two.Add("c.h", root_).ok());
  EXPECT_FALSE(SameDigest(FileTreeDigest(one.Tree()), FileTreeDigest(two.Tree())));
}

TEST_F(FileTreeBuilderTest, IncludedHeadersGccDoesNotList) {
  Write("inc/real.h", "#pragma once\n");
  Write("inc/probed.h", "");
  Write("other/unused.h", "");
  Link("../inc", "gen/alias");
  Write("src/a.cc",
        "#include \"real.h\"\n#include \"gen/alias/real.h\"\n"
        "#if __has_include(<probed.h>)\n#endif\n#include <absent.h>\n");
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add("src/a.cc", root_).ok());
  ASSERT_TRUE(builder.Add("inc/real.h", root_).ok());
  ASSERT_TRUE(AddIncludedHeaders(builder, {"inc", root_}, root_).ok());
  EXPECT_THAT(Shown(builder), ElementsAre("gen/alias -> ../inc", "inc/probed.h 0", "inc/real.h 13",
                                          "src/a.cc 103"));
}

// The probes rule names out by directory listings; every way a name can reach a file must
// still find it: '..', a symlinked directory, an absolute name, nested directories, and the
// same name in two search directories.
TEST_F(FileTreeBuilderTest, IncludedHeadersFoundThroughEveryKindOfName) {
  Write("up/u.h", "");
  Write("real/x.h", "");
  Link("../real", "inc/lnk");
  Write("inc/deep/er/d.h", "");
  Write("abs/a.h", "");
  Write("inc/twice.h", "");
  Write("inc2/twice.h", "");
  Write("inc/file.h", "");
  const std::string source =
      "#include \"../up/u.h\"\n#include <lnk/x.h>\n#include <deep/er/d.h>\n#include \"" + root_ +
      "/abs/a.h\"\n#include <twice.h>\n#include <file.h/x.h>\n#include <deep/none.h>\n";
  Write("src/a.cc", source);
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add("src/a.cc", root_).ok());
  ASSERT_TRUE(AddIncludedHeaders(builder, {"inc", "inc2"}, root_).ok());
  EXPECT_THAT(Shown(builder), ElementsAre("abs/a.h 0", "inc/deep/er/d.h 0", "inc/lnk -> ../real",
                                          "inc/twice.h 0", "inc2/twice.h 0", "real/x.h 0",
                                          "src/a.cc " + std::to_string(source.size()), "up/u.h 0"));
}

// What a compile's includes reach, from its source alone: every header of each name in
// every directory it may be looked up in, on down through what those include. A precompiled
// header beside one of them and a file that includes by a macro's name are both reported.
TEST_F(FileTreeBuilderTest, IncludedHeadersFromTheSourceAloneAndWhatStopsThat) {
  Write("src/local.h", "#include <lib.h>\n");
  Write("inc1/lib.h", "#include_next <lib.h>\n");
  Write("inc2/lib.h", "#include \"leaf.h\"\n");
  Write("inc2/leaf.h", "");
  Write("src/a.cc", "#include \"local.h\"\n#if 0\n#include \"only_if.h\"\n#endif\n");
  Write("inc2/only_if.h", "");
  FileTreeBuilder builder;
  ASSERT_TRUE(builder.Add("src/a.cc", root_).ok());
  bool precompiled = false;
  ASSERT_TRUE(AddIncludedHeaders(builder, {"inc1", "inc2"}, root_, &precompiled).ok());
  EXPECT_THAT(Shown(builder), ElementsAre("inc1/lib.h 22", "inc2/leaf.h 0", "inc2/lib.h 18",
                                          "inc2/only_if.h 0", "src/a.cc 53", "src/local.h 17"));
  EXPECT_FALSE(precompiled);
  EXPECT_EQ(builder.first_unread_include_file(), "");

  // A directory that does not exist yet (the compiler's nonexistent search directories) is
  // probed too: once it exists, a header there is found.
  FileTreeBuilder later;
  ASSERT_TRUE(later.Add("src/a.cc", root_).ok());
  ASSERT_TRUE(AddIncludedHeaders(later, {"inc0", "inc1", "inc2"}, root_, &precompiled).ok());
  EXPECT_EQ(Shown(later), Shown(builder));
  Write("inc0/lib.h", "");
  FileTreeBuilder appeared;
  ASSERT_TRUE(appeared.Add("src/a.cc", root_).ok());
  ASSERT_TRUE(AddIncludedHeaders(appeared, {"inc0", "inc1", "inc2"}, root_, &precompiled).ok());
  EXPECT_THAT(Shown(appeared), Contains("inc0/lib.h 0"));

  Write("inc2/leaf.h.gch", "gpch");
  Write("inc2/leaf.h", "#define NAME <x.h>\n#include NAME\n");
  FileTreeBuilder again;
  ASSERT_TRUE(again.Add("src/a.cc", root_).ok());
  ASSERT_TRUE(AddIncludedHeaders(again, {"inc1", "inc2"}, root_, &precompiled).ok());
  EXPECT_TRUE(precompiled);
  EXPECT_EQ(again.first_unread_include_file(), root_ + "/inc2/leaf.h");
}

TEST_F(FileTreeBuilderTest, KeptFileFactsStandInForReadingUntilTheFileChanges) {
  Write("a.cc", "#include \"b.h\"\n#include <c.h>\n");
  Write("b.h", "int b = 1234;");
  Write("inc/c.h", "#if __has_include(<d.h>)\n#endif\n");
  Write("inc/d.h", "__TIME__\n");
  // Facts are kept only for a file unchanged for two seconds (file_facts_cache.h).
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const std::string store = root_ + "/facts/store";
  auto build = [&](FileFactsCache& facts) {
    FileTreeBuilder builder(&facts);
    EXPECT_TRUE(builder.Add("a.cc", root_).ok());
    EXPECT_TRUE(AddIncludedHeaders(builder, {"inc"}, root_).ok());
    EXPECT_TRUE(facts.Save().ok());
    return builder;
  };
  FileFactsCache first = FileFactsCache::Load(store, 1 << 20);
  const FileTreeBuilder read = build(first);
  EXPECT_EQ(first.hits(), 0);
  EXPECT_EQ(first.kept(), 0);  // saved
  EXPECT_TRUE(read.mentions_time_macros());

  FileFactsCache second = FileFactsCache::Load(store, 1 << 20);
  const FileTreeBuilder kept = build(second);
  EXPECT_EQ(second.hits(), 4);  // nothing read
  EXPECT_EQ(FileTreeDigest(kept.Tree()).hash(), FileTreeDigest(read.Tree()).hash());
  EXPECT_TRUE(kept.mentions_time_macros());
  ASSERT_EQ(kept.include_sites().size(), read.include_sites().size());

  // Rewritten in place (the same inode), the same size, its mtime set back an hour: its ctime
  // still tells, and it is read again.
  std::ofstream(root_ + "/b.h", std::ios::trunc) << "#include<e.h>";
  Write("inc/e.h", "");
  struct stat b {};
  ASSERT_EQ(stat((root_ + "/b.h").c_str(), &b), 0);
  const struct timespec old_times[2] = {b.st_atim, {b.st_mtim.tv_sec - 3600, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, (root_ + "/b.h").c_str(), old_times, 0), 0);
  FileFactsCache third = FileFactsCache::Load(store, 1 << 20);
  const FileTreeBuilder changed = build(third);
  EXPECT_EQ(third.hits(), 3);
  EXPECT_THAT(Shown(changed), Contains("b.h 13"));
  EXPECT_THAT(Shown(changed), Contains("inc/e.h 0"));
}

}  // namespace
}  // namespace farm::cc
