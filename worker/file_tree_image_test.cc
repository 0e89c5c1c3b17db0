#include "worker/file_tree_image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/file_tree_entries.h"

namespace farm::worker {
namespace {

using ::farm::testing::TreeFile;
using ::farm::testing::TreeLink;
using ::farm::testing::TreeOf;
using ::testing::HasSubstr;

TEST(FileTreeImageTest, TheTwoTreesMustAgree) {
  const auto toolchain = TreeOf({TreeLink("lib64", "usr/lib64"), TreeFile("usr/bin/g++-12")});
  EXPECT_TRUE(
      CheckTreesAgree(toolchain, TreeOf({TreeFile("usr/bin/g++-12"), TreeFile("src/a.cc")})).ok());
  EXPECT_THAT(CheckTreesAgree(toolchain, TreeOf({TreeFile("usr/bin/g++-12", 'b')})).message(),
              HasSubstr("one thing in the toolchain and another"));
  EXPECT_THAT(CheckTreesAgree(toolchain, TreeOf({TreeFile("lib64/libc.so.6")})).message(),
              HasSubstr("below the link 'lib64'"));
  EXPECT_THAT(CheckTreesAgree(toolchain, TreeOf({TreeLink("usr/bin", "/etc")})).message(),
              HasSubstr("below the link 'usr/bin'"));
}

// The worker makes the working directory and the outputs' directories: never through a link.
TEST(FileTreeImageTest, OutputsAndTheWorkingDirectoryNeverGoThroughALink) {
  const auto toolchain = TreeOf({TreeLink("lib64", "usr/lib64")});
  const auto inputs = TreeOf({TreeLink("home", "/etc"), TreeFile("src/a.cc")});
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
