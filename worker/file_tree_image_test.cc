#include "worker/file_tree_image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace farm::worker {
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

TEST(FileTreeImageTest, TheTwoTreesMustAgree) {
  const auto toolchain = Tree({Link("lib64", "usr/lib64"), File("usr/bin/g++-12")});
  EXPECT_TRUE(CheckTreesAgree(toolchain, Tree({File("usr/bin/g++-12"), File("src/a.cc")})).ok());
  EXPECT_THAT(CheckTreesAgree(toolchain, Tree({File("usr/bin/g++-12", 'b')})).message(),
              HasSubstr("one thing in the toolchain and another"));
  EXPECT_THAT(CheckTreesAgree(toolchain, Tree({File("lib64/libc.so.6")})).message(),
              HasSubstr("below the link 'lib64'"));
  EXPECT_THAT(CheckTreesAgree(toolchain, Tree({Link("usr/bin", "/etc")})).message(),
              HasSubstr("below the link 'usr/bin'"));
}

// The worker makes the working directory and the outputs' directories: never through a link.
TEST(FileTreeImageTest, OutputsAndTheWorkingDirectoryNeverGoThroughALink) {
  const auto toolchain = Tree({Link("lib64", "usr/lib64")});
  const auto inputs = Tree({Link("home", "/etc"), File("src/a.cc")});
  EXPECT_TRUE(CheckNotThroughLinks({"build/a.o"}, toolchain, inputs).ok());
  EXPECT_TRUE(CheckNotThroughLinks({"src"}, toolchain, inputs).ok());
  EXPECT_THAT(CheckNotThroughLinks({"home/u/build/a.o"}, toolchain, inputs).message(),
              HasSubstr("below the link 'home'"));
  EXPECT_THAT(CheckNotThroughLinks({"home"}, toolchain, inputs).message(), HasSubstr("is a link"));
  EXPECT_THAT(CheckNotThroughLinks({"lib64/x.o"}, toolchain, inputs).message(),
              HasSubstr("below the link 'lib64'"));
}

}  // namespace
}  // namespace farm::worker
