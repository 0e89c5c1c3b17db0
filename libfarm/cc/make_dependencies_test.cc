#include "libfarm/cc/make_dependencies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cc {
namespace {

using ::testing::ElementsAre;

TEST(ParseMakeDependenciesTest, GccRule) {
  EXPECT_THAT(
      ParseMakeDependencies("farm-cc-scan: a.cc /usr/include/stdio.h \\\n"
                            " ../inc/x.h \\\n /usr/include/c++/12/vector\n"),
      ElementsAre("a.cc", "/usr/include/stdio.h", "../inc/x.h", "/usr/include/c++/12/vector"));
}

TEST(ParseMakeDependenciesTest, EscapesAndPhonyTargets) {
  // GCC writes "\ " for a space, "\#" for '#', "$$" for '$'; clang the same. -MP adds
  // "x.h:" rules.
  EXPECT_THAT(ParseMakeDependencies("t.o: my\\ dir/a.cc h\\#1.h cost$$.h \\\r\n  b.h\n\nb.h:\n"
                                    "h\\#1.h:\n"),
              ElementsAre("my dir/a.cc", "h#1.h", "cost$.h", "b.h"));
}

TEST(ParseMakeDependenciesTest, EachFileOnceAndTargetsWithSpaces) {
  EXPECT_THAT(ParseMakeDependencies("a\\ b.o : x.h y.h\nc.o: x.h z.h"),
              ElementsAre("x.h", "y.h", "z.h"));
  EXPECT_THAT(ParseMakeDependencies(""), ElementsAre());
  EXPECT_THAT(ParseMakeDependencies("t.o:\n"), ElementsAre());
}

}  // namespace
}  // namespace farm::cc
