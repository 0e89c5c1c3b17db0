#include "libfarm/file_tree/file_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/file_tree_entries.h"

namespace farm {
namespace {

using ::farm::testing::TreeFile;
using ::farm::testing::TreeLink;
using ::farm::testing::TreeOf;
using ::testing::HasSubstr;

std::string Refusal(const farm::v1::FileTree& tree) {
  const absl::Status s = ValidateFileTree(tree);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST(FileTreeTest, AToolchainShapedTreeIsValid) {
  EXPECT_TRUE(ValidateFileTree(TreeOf({TreeLink("usr/bin/g++", "g++-12"),
                                       TreeFile("usr/bin/g++-12"), TreeLink("lib64", "usr/lib64"),
                                       TreeFile("usr/lib64/ld-linux-x86-64.so.2")}))
                  .ok());
}

// A client names every path: none may leave the scratch directory, reach the kernel's
// directories, or be written through a link (which could point anywhere on the worker).
TEST(FileTreeTest, HostilePathsAreRefused) {
  EXPECT_THAT(Refusal(TreeOf({TreeFile("/etc/passwd")})), HasSubstr("/etc/passwd"));
  EXPECT_THAT(Refusal(TreeOf({TreeFile("usr/../../x")})), HasSubstr("usr/../../x"));
  EXPECT_THAT(Refusal(TreeOf({TreeFile("proc/self/mem")})), HasSubstr("under /proc or /dev"));
  EXPECT_THAT(Refusal(TreeOf({TreeFile("dev/sda")})), HasSubstr("under /proc or /dev"));
  EXPECT_THAT(Refusal(TreeOf({TreeFile("a/b"), TreeFile("a/b", 'b')})), HasSubstr("appears twice"));
  EXPECT_THAT(Refusal(TreeOf({TreeLink("usr/lib", "/etc"), TreeFile("usr/lib/x")})),
              HasSubstr("lies below the link 'usr/lib'"));
  EXPECT_THAT(Refusal(TreeOf({TreeLink("l", std::string("a\0b", 3))})),
              HasSubstr("malformed target"));
  farm::v1::InputFile both = TreeLink("d", "x");
  both.set_directory(true);
  EXPECT_THAT(Refusal(TreeOf({both})), HasSubstr("a directory and a file or link"));
  farm::v1::InputFile dir;
  dir.set_path("opt/cuda/bin");
  dir.set_directory(true);
  EXPECT_TRUE(ValidateFileTree(TreeOf({dir, TreeFile("opt/cuda/include/a.h")})).ok());
  farm::v1::InputFile no_digest;
  no_digest.set_path("a");
  EXPECT_THAT(Refusal(TreeOf({no_digest})), HasSubstr("'a'"));
}

// Debian's /bin is a link to usr/bin: the compiler a build host names may be reached only
// through the tree's links.
TEST(FileTreeTest, APathResolvesThroughTheTreesLinksToAFile) {
  const auto tree =
      TreeOf({TreeLink("bin", "usr/bin"), TreeLink("usr/bin/g++", "g++-12"),
              TreeFile("usr/bin/g++-12"), TreeLink("lib64", "/usr/lib64"),
              TreeFile("usr/lib64/ld.so"), TreeLink("loop", "loop"), TreeLink("up", "../etc")});
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

}  // namespace
}  // namespace farm
