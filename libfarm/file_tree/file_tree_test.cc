#include "libfarm/file_tree/file_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace farm {
namespace {

using ::testing::HasSubstr;

farm::v1::InputFile File(const std::string& path, char fill = 'a') {
  farm::v1::InputFile f;
  f.set_path(path);
  f.mutable_digest()->set_hash(std::string(64, fill));
  f.mutable_digest()->set_size_bytes(10);
  return f;
}

farm::v1::InputFile Link(const std::string& path, const std::string& target) {
  farm::v1::InputFile f;
  f.set_path(path);
  f.set_symlink_target(target);
  return f;
}

farm::v1::FileTree Tree(std::initializer_list<farm::v1::InputFile> entries) {
  farm::v1::FileTree t;
  for (const auto& e : entries) *t.add_files() = e;
  return t;
}

std::string Refusal(const farm::v1::FileTree& tree) {
  const absl::Status s = ValidateFileTree(tree);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(FileTreeTest, AToolchainShapedTreeIsValid) {
  EXPECT_TRUE(
      ValidateFileTree(Tree({Link("usr/bin/g++", "g++-12"), File("usr/bin/g++-12"),
                             Link("lib64", "usr/lib64"), File("usr/lib64/ld-linux-x86-64.so.2")}))
          .ok());
}

// A client names every path: none may leave the scratch directory, reach the kernel's
// directories, or be written through a link (which could point anywhere on the worker).
TEST(FileTreeTest, HostilePathsAreRefused) {
  EXPECT_THAT(Refusal(Tree({File("/etc/passwd")})), HasSubstr("/etc/passwd"));
  EXPECT_THAT(Refusal(Tree({File("usr/../../x")})), HasSubstr("usr/../../x"));
  EXPECT_THAT(Refusal(Tree({File("proc/self/mem")})), HasSubstr("under /proc or /dev"));
  EXPECT_THAT(Refusal(Tree({File("dev/sda")})), HasSubstr("under /proc or /dev"));
  EXPECT_THAT(Refusal(Tree({File("a/b"), File("a/b", 'b')})), HasSubstr("appears twice"));
  EXPECT_THAT(Refusal(Tree({Link("usr/lib", "/etc"), File("usr/lib/x")})),
              HasSubstr("lies below the link 'usr/lib'"));
  EXPECT_THAT(Refusal(Tree({Link("l", std::string("a\0b", 3))})), HasSubstr("malformed target"));
  farm::v1::InputFile both = Link("d", "x");
  both.set_directory(true);
  EXPECT_THAT(Refusal(Tree({both})), HasSubstr("a directory and a file or link"));
  farm::v1::InputFile dir;
  dir.set_path("opt/cuda/bin");
  dir.set_directory(true);
  EXPECT_TRUE(ValidateFileTree(Tree({dir, File("opt/cuda/include/a.h")})).ok());
  farm::v1::InputFile no_digest;
  no_digest.set_path("a");
  EXPECT_THAT(Refusal(Tree({no_digest})), HasSubstr("'a'"));
}

// Debian's /bin is a link to usr/bin: the compiler a build host names may be reached only
// through the tree's links.
TEST(FileTreeTest, APathResolvesThroughTheTreesLinksToAFile) {
  const auto tree = Tree({Link("bin", "usr/bin"), Link("usr/bin/g++", "g++-12"),
                          File("usr/bin/g++-12"), Link("lib64", "/usr/lib64"),
                          File("usr/lib64/ld.so"), Link("loop", "loop"), Link("up", "../etc")});
  EXPECT_EQ(*ResolveFileInTree(tree, "/bin/g++"), "usr/bin/g++-12");
  EXPECT_EQ(*ResolveFileInTree(tree, "/usr/bin/g++-12"), "usr/bin/g++-12");
  EXPECT_EQ(*ResolveFileInTree(tree, "/lib64/ld.so"), "usr/lib64/ld.so");
  EXPECT_EQ(*ResolveFileInTree(tree, "/usr/bin/../bin/g++"), "usr/bin/g++-12");
  for (const std::string missing :
       {"/usr/bin/no-such-compiler", "/usr/bin", "/bin", "/loop", "/up/passwd", "relative", ""}) {
    EXPECT_EQ(ResolveFileInTree(tree, missing).status().code(), absl::StatusCode::kNotFound)
        << missing;
  }
}

TEST(FileTreeTest, ParseRefusesWhatIsNotATree) {
  EXPECT_THAT(ParseFileTree("\xff\xff\xff").status().message(), HasSubstr("does not parse"));
  const std::string bytes = Tree({File("/abs")}).SerializeAsString();
  EXPECT_EQ(ParseFileTree(bytes).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace farm
