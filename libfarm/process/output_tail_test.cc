#include "libfarm/process/output_tail.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(TailLinesTest, KeepsTheLastLinesAndAtMost4000Characters) {
  EXPECT_EQ(TailLines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(TailLines("a\nb\n\n\n", 5), "a\nb");
  EXPECT_EQ(TailLines("", 2), "");
  const std::string long_line(5000, 'x');
  const std::string tail = TailLines("first\n" + long_line, 2);
  EXPECT_EQ(tail.size(), 4003u);
  EXPECT_EQ(tail.substr(0, 4), "...x");
}

TEST(TailLinesTest, TheCutNeverSplitsACharacter) {
  // gcc's quote U+2018 is three bytes; a cut after its first leaves two continuation bytes.
  const std::string text = "\xe2\x80\x98" + std::string(3998, 'x');
  EXPECT_EQ(TailLines(text, 1), "..." + std::string(3998, 'x'));
}

}  // namespace
}  // namespace farm
