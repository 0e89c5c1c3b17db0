#include "libfarm/recipes/source_archive_name.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(SourceArchiveNameTest, TarArchivesOfEachCompressionArePlainNamesWithTheirSuffix) {
  for (const char* name : {"torchvision-0.26.0-src.tar.gz", "v0.26.0.tgz", "x_1+local.tar.xz",
                           "X.TXZ", "a.tar.bz2", "a.tbz2"}) {
    EXPECT_TRUE(CheckSourceArchiveName(name).ok()) << name;
  }
  for (const char* name : {"a.zip", "a.tar", "a.gz", ".tar.gz", "", "../a.tar.gz", "d/a.tar.gz",
                           ".hidden.tar.gz", "a b.tar.gz", "a\n.tar.gz"}) {
    EXPECT_FALSE(CheckSourceArchiveName(name).ok()) << name;
  }
  EXPECT_NE(CheckSourceArchiveName("a.zip").message().find(".tar.gz, .tgz"), std::string::npos);
  EXPECT_NE(CheckSourceArchiveName("a\n.tar.gz").message().find("a\\n.tar.gz"), std::string::npos);
}

}  // namespace
}  // namespace farm
